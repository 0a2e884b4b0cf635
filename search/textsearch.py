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

from core.cjk import CJK_LETTERS, is_cjk

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

_TOKEN = re.compile(rf"[{CJK_LETTERS}]+|[^\W_{CJK_LETTERS}]+", re.UNICODE)


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


def search_terms(text: str) -> list[str]:
    """``terms`` without stopwords of either language: what is indexed and searched."""
    return [term for term in terms(text) if not is_stopword(term)]


def search_document(text: str) -> str:
    """The text PostgreSQL indexes for a memory (see the module docstring)."""
    return " ".join(search_terms(text))


# Words that say little about what a text is about. English: the ``english`` configuration's
# own list (PostgreSQL drops them from documents and queries alike; this copy serves the
# local embedding and the query's intent). Chinese: bigrams holding a particle or pronoun,
# and the commonest function words, left out of documents and queries alike.
_ENGLISH_STOPWORDS = """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will just
    don should now"""
ENGLISH_STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split())
CJK_STOP_CHARACTERS = frozenset("的了吗呢吧啊么呀嘛哪我你他她它们什是也很")
_CJK_STOP_BIGRAMS = """几号 几点 几月 多久 时候 怎样 如何 为何 一个 这个 那个 这些 那些 可以 因为 所以 但是
    还是 就是 如果 已经 一下 一些 没有 有没 有什 之前 之后 以后 以前"""
CJK_STOP_BIGRAMS = frozenset(_CJK_STOP_BIGRAMS.split())


def is_stopword(term: str) -> bool:
    """Whether a term of ``terms`` (a lower-cased word or a CJK bigram) is a stopword."""
    if is_cjk(term):
        return term in CJK_STOP_BIGRAMS or any(char in CJK_STOP_CHARACTERS for char in term)
    return term in ENGLISH_STOPWORDS


# A small bilingual vocabulary of common technical and everyday concepts: a query naming one
# member of a group also searches the others (at a lower weight, keyword.EXPANSION_WEIGHT),
# so "write tests" finds "I prefer pytest" and "docker build" finds "Docker 构建".
CONCEPTS: tuple[tuple[str, ...], ...] = (
    ("test", "tests", "testing", "pytest", "unittest", "jest", "测试", "单测"),
    ("build", "builds", "compile", "构建", "编译"),
    ("docker", "container", "containers", "dockerfile", "容器", "镜像"),
    ("deploy", "deployment", "release", "部署", "发布", "上线"),
    ("database", "db", "postgres", "postgresql", "mysql", "sql", "数据库"),
    ("bug", "error", "errors", "exception", "crash", "错误", "报错", "异常"),
    ("fail", "fails", "failed", "failure", "失败"),
    ("network", "internet", "网络"),
    ("proxy", "vpn", "firewall", "代理"),
    ("config", "configuration", "settings", "setting", "配置", "设置"),
    ("code", "coding", "program", "programming", "代码", "编程"),
    ("install", "installation", "setup", "安装"),
    ("performance", "slow", "fast", "speed", "latency", "性能", "速度"),
    ("cache", "caching", "缓存"),
    ("server", "backend", "服务器", "后端"),
    ("frontend", "ui", "前端", "界面"),
    ("document", "documentation", "docs", "文档"),
    ("log", "logs", "logging", "日志"),
    ("password", "credential", "secret", "密码"),
    ("python", "py", "django"),
    ("editor", "ide", "vscode", "vim", "编辑器"),
    ("meeting", "meetings", "会议", "开会"),
    ("deadline", "due", "截止"),
    ("birthday", "生日"),
    ("travel", "trip", "vacation", "holiday", "旅行", "旅游", "度假"),
    ("work", "job", "career", "工作"),
    ("family", "parents", "家人", "家里"),
    ("dog", "puppy", "狗"),
    ("cat", "kitten", "猫"),
    ("music", "song", "songs", "音乐"),
    ("movie", "film", "电影"),
    ("book", "books", "novel", "reading", "书"),
    ("exercise", "workout", "gym", "fitness", "运动", "健身"),
    ("run", "running", "marathon", "跑步"),
    ("food", "cook", "cooking", "recipe", "做饭"),
    ("coffee", "咖啡"),
    ("tea", "茶"),
    ("doctor", "hospital", "医生", "医院"),
    ("school", "class", "学校", "上课"),
    ("house", "home", "apartment", "房子", "公寓"),
    ("car", "drive", "driving", "车", "开车"),
    ("money", "salary", "pay", "钱", "工资"),
)


def _concept_key(word: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_CONCEPT_INDEX: dict[str, tuple[str, ...]] = {}
for _group in CONCEPTS:
    for _member in _group:
        _CONCEPT_INDEX.setdefault(_member, _group)
        _CONCEPT_INDEX.setdefault(_concept_key(_member), _group)


def expansions(text: str) -> list[str]:
    """The other members of every concept a word of ``text`` names (CJK: a bigram or the whole
    run), for the query only; never the text's own words."""
    tokens = _TOKEN.findall(text.lower())
    pieces: list[str] = []
    for token in tokens:
        pieces.append(token)
        if is_cjk(token) and len(token) > 2:
            pieces.extend(bigrams(token))
    own = set(pieces)
    groups: list[list[str]] = []
    for piece in pieces:
        group = _CONCEPT_INDEX.get(piece) or _CONCEPT_INDEX.get(_concept_key(piece))
        if group:
            # The other language's words first: what the query's own words cannot find.
            others = [member for member in group if member not in own]
            groups.append(sorted(others, key=lambda member: is_cjk(member) == is_cjk(piece)))
    # Round robin over the concepts, so that a few words of each come first.
    found = [
        group[i]
        for i in range(max(map(len, groups), default=0))
        for group in groups
        if i < len(group)
    ]
    return list(dict.fromkeys(found))


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
