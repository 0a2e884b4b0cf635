"""Full-text search that understands Chinese as well as English.

PostgreSQL's parsers do not split Chinese and the embedded server has no
zhparser or pg_trgm, so the app turns text into terms itself, the same way for
documents and for queries: Latin words stay words (stemmed by the ``english``
configuration), and every run of CJK characters becomes its overlapping
character bigrams ("我喜欢用" → "我喜 喜欢 欢用"). A one-character CJK query
becomes a prefix query, so it still finds the bigrams that start with it.
"""

from __future__ import annotations

import re

SEARCH_CONFIG = "english"

# A memory's search vector plus lexemes naming who may see it ("ownerid<id>", "projectid<id>";
# single words, so to_tsquery keeps them whole). Indexed (memory_search_access_idx), so a
# query "(ownerid7 | projectid3) & (terms)" is intersected inside the GIN index instead of
# ANDing the terms' matches with all of a large user's rows. A memory whose text contains
# such a word only costs a row the visibility filter then drops.
ACCESS_DOCUMENT_SQL = (
    '("memoryapp_memory"."search_vector" || array_to_tsvector(array_remove(ARRAY['
    '\'ownerid\' || "memoryapp_memory"."owner_id"::text, '
    '\'projectid\' || "memoryapp_memory"."project_id"::text], NULL)))'
)

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")


def is_cjk(token: str) -> bool:
    return bool(_CJK_RUN.match(token))


def bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def terms(text: str) -> list[str]:
    """The search terms of a text: lower-cased words and CJK bigrams, in order."""
    result: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if is_cjk(token):
            result.extend(bigrams(token))
        else:
            result.append(token)
    return result


def search_document(text: str) -> str:
    """The text PostgreSQL indexes for a memory (see the module docstring)."""
    return " ".join(terms(text))


def tsquery(text: str, *, prefix: bool = False, match_all: bool = True) -> str:
    """A raw tsquery for ``to_tsquery(SEARCH_CONFIG, ...)``, or "" when nothing is searchable.

    Only letters, digits and CJK characters reach the query, so user input can
    never break its syntax. With ``prefix`` the last word matches as a prefix
    (search as you type); a lone CJK character always does.
    """
    tokens = _TOKEN.findall(text.lower())
    parts: list[str] = []
    for index, token in enumerate(tokens):
        last = index == len(tokens) - 1
        if is_cjk(token):
            grams = bigrams(token)
            if len(token) == 1:
                parts.append(f"{token}:*")
            else:
                parts.append("(" + " & ".join(grams) + ")" if match_all else " | ".join(grams))
        else:
            parts.append(f"{token}:*" if prefix and last else token)
    return (" & " if match_all else " | ").join(parts)
