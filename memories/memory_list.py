"""A list of memories with search, filters, state tabs, counts and pages.

The settings page lists everything a user may see; a project's page (later)
lists one project's memories. Both are a ``MemoryListSource`` (which memories,
at which URL) read through ``filters.MemoryFilters`` parsed from the query string
(the object the API and recall use too), so a filtered view is a bookmarkable URL
and the same templates serve both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchQuery
from django.db.models import BigIntegerField, Count, F, FloatField, Func, Q, Value
from django.db.models.functions import Coalesce
from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils import timezone
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from core.cjk import is_cjk
from memories.filters import (
    MAX_PAGES,
    PERSONAL,
    PROJECT_PREFIX,
    SORTS,
    MemoryFilters,
)
from memories.models import (
    STATE_CONDITIONS,
    STATE_LABELS,
    Kind,
    Memory,
    MemoryQuerySet,
    Origin,
    Scope,
)
from memories.permissions import can_change_memory, can_review_memory, memories_writable_by
from memories.search import similar_memories
from memories.when import MemoryDate, memory_when
from search.hybrid import KEYWORD_WEIGHT, RRF_K, VECTOR_WEIGHT
from search.keyword import keyword_hits
from search.textsearch import SEARCH_CONFIG, terms, tsquery
from search.vectors import Degraded
from teams.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from django.db.models.expressions import OrderBy

PAGE_SIZE = 20
# A search lists at most this many memories found by meaning alone (besides its word matches).
SIMILAR_MATCHES = 20
# The word matches ranked as recall ranks them (the rest follow, newest first).
KEYWORD_MATCHES = 200
# BM25 scores at most this many matches (those holding every word first, then the newest):
# a common word can match thousands. Not fewer words instead (recall's ``max_rows``): among
# a million memories statistics would leave one word of a few to rank the matches by.
MAX_MATCH_ROWS = 2000
# Meaning is searched only when the words found fewer than this many memories: it is how a
# misspelling, or the same thing in other words, is still found, and ranking every vector of
# a large user (10,000: 13 ms) is wasted on a page the words fill.
FEW_WORD_MATCHES = PAGE_SIZE

# What each tab holds is the state's one definition (models.STATE_CONDITIONS).
_STATE_COUNTS = {state: Count("id", filter=STATE_CONDITIONS[state]) for state in STATE_LABELS}

SORT_LABELS: dict[str, Any] = {
    "relevance": _("Best match"),
    "newest": _("Newest"),
    "last_used": _("Last used"),
    "most_used": _("Most used"),
    "importance": _("Importance"),
}
SORT_ORDERS: dict[str, tuple[OrderBy, ...]] = {
    # Pinned first, as the injection puts them first.
    "newest": (F("pinned").desc(), F("created_at").desc(), F("id").desc()),
    "last_used": (F("last_accessed_at").desc(nulls_last=True), F("id").desc()),
    "most_used": (F("access_count").desc(), F("id").desc()),
    "importance": (F("importance").desc(), F("id").desc()),
}


@dataclass(frozen=True)
class SearchMatch:
    """What the search box found among some memories.

    The words typed, in full text over content and tags (English words and CJK
    bigrams, the last word a prefix so results follow the typing), and the
    memories nearest in meaning from semantic recall (``retrieval``), which
    finds what is said in other words or misspelt. Without vectors (none yet,
    or the provider failing) the words alone match and ``degraded`` says why.
    """

    words: SearchQuery | None
    similar: tuple[int, ...] = ()
    degraded: Degraded | None = None
    # The best word matches by recall's keyword ranking (BM25), best first.
    keyword: tuple[int, ...] = ()
    # CJK characters typed alone: a prefix of the bigrams that start with them, they would
    # miss the words they end (茶 in 乌龙茶), so the text is searched for them as well.
    characters: tuple[str, ...] = ()

    @classmethod
    def among(cls, memories: MemoryQuerySet, text: str) -> SearchMatch:
        # Any word typed matches (the last as a prefix); the ranking says which match best.
        query = tsquery(text, prefix=True, match_all=False)
        words = SearchQuery(query, search_type="raw", config=SEARCH_CONFIG) if query else None
        keyword = (
            keyword_hits(
                memories,
                text,
                KEYWORD_MATCHES,
                as_typed=True,
                max_hits=MAX_MATCH_ROWS,
            )
            if words is not None
            else []
        )
        similar: list[tuple[int, float]] = []
        degraded = None
        if len(keyword) < FEW_WORD_MATCHES:
            similar, degraded = similar_memories(
                memories,
                text,
                limit=SIMILAR_MATCHES,
                min_similarity=settings.MEMORY_SEARCH_MIN_SIMILARITY,
            )
        return cls(
            words,
            tuple(memory_id for memory_id, _similarity in similar),
            degraded,
            tuple(memory_id for memory_id, _score in keyword),
            tuple(term for term in terms(text) if len(term) == 1 and is_cjk(term)),
        )

    @property
    def _by_words(self) -> Q | None:
        if self.words is None:
            return None
        condition = Q(search_vector=self.words)
        for character in self.characters:
            condition |= Q(content__contains=character)
        return condition

    @property
    def condition(self) -> Q:
        found_by_meaning = Q(pk__in=self.similar)
        by_words = self._by_words
        return found_by_meaning if by_words is None else found_by_meaning | by_words

    def by_meaning_only(self, ids: Iterable[int]) -> frozenset[int]:
        """Which of ``ids`` the search found by meaning alone, none of the words typed."""
        similar = set(self.similar).intersection(ids)
        by_words = self._by_words
        if not similar or by_words is None:
            return frozenset(similar)
        with_words = Memory.objects.filter(by_words, pk__in=similar)
        return frozenset(similar - set(with_words.values_list("pk", flat=True)))

    def best_first(self, memories: MemoryQuerySet) -> MemoryQuerySet:
        """``memories`` (matches of this search) ordered as recall fuses its lists: reciprocal
        rank fusion of the rank by the words (BM25, ``search.keyword.keyword_hits``, the word
        being typed as a prefix) and by meaning; the matches neither ranked follow, newest
        first."""
        relevance = _fused(self.keyword, KEYWORD_WEIGHT) + _fused(self.similar, VECTOR_WEIGHT)
        return memories.annotate(relevance=relevance).order_by(
            F("relevance").desc(), F("id").desc()
        )


def _fused(ranked: Sequence[int], weight: float) -> Any:
    """A memory's share of reciprocal rank fusion from one list: ``weight / (RRF_K + rank)``
    when ``ranked`` holds it, else 0. One array_position, not a CASE of a WHEN for each id:
    Django took 11 ms to build and compile one of 200, on every search."""
    if not ranked:
        return Value(0.0)
    rank = Func(
        Value(list(ranked), output_field=ArrayField(BigIntegerField())),
        F("id"),
        function="array_position",
        output_field=FloatField(),
    )
    return Coalesce(Value(weight) / (Value(float(RRF_K)) + rank), Value(0.0))


def _highlight_pattern(text: str) -> re.Pattern[str] | None:
    alternatives: list[str] = []
    for token in re.findall(r"[^\W_]+", text.lower()):
        if is_cjk(token):
            # The whole run first, then its bigrams, which are what matched.
            pieces = [token] + [token[i : i + 2] for i in range(len(token) - 1)]
            alternatives.extend(re.escape(piece) for piece in pieces)
        else:
            alternatives.append(rf"\b{re.escape(token)}\w*")
    if not alternatives:
        return None
    alternatives.sort(key=len, reverse=True)
    return re.compile("|".join(alternatives), re.IGNORECASE)


def mark_matches(text: str, pattern: re.Pattern[str] | None) -> SafeString:
    """``text`` as HTML with the matches of ``pattern`` wrapped in <mark>.

    The text is cut at the matches first and every piece is escaped, so a match
    can never fall inside an HTML entity and nothing of the text is ever
    rendered as markup.
    """
    if pattern is None:
        return escape(text)
    parts: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        if match.end() == match.start():
            continue
        parts.append(escape(text[position : match.start()]))
        parts.append(f"<mark>{escape(match.group())}</mark>")
        position = match.end()
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts))  # Safe: every piece is escaped above.


def highlight(content: str, query: str) -> SafeString:
    """``content`` as HTML with the words the search ``query`` matched marked."""
    return mark_matches(content, _highlight_pattern(query) if query else None)


@dataclass(frozen=True)
class RowAction:
    """A POST button of a row: where it posts, what it says, and the one field it sends."""

    url: str
    label: str
    field: str = ""
    value: str = ""
    danger: bool = False
    # Shown on the row itself (accept, reject, restore); the others are in its menu.
    primary: bool = False


@dataclass(frozen=True)
class MemoryRow:
    """One memory as its list row shows it.

    Every URL, label and figure is worked out in Python once per row, so the
    row template is plain output: a page renders many rows, and template tags
    (reverses, translations with plurals, date filters) cost far more there.
    """

    pk: int
    kind: str
    state: str
    pinned: bool
    writable: bool
    # Found by the search for its meaning, without the words typed.
    found_by_meaning: bool
    select_label: SafeString
    content: SafeString
    tags: list[SafeString]
    kind_label: str
    project_name: str
    project_url: str
    scope_label: str
    created_iso: str
    created_title: str
    created_ago: str
    # The day it is about (an event, or when it began to hold), when not the day it was stored.
    when: MemoryDate | None
    used_label: SafeString
    importance_percent: int
    confidence_percent: int
    origin_label: str
    conversation_label: SafeString
    superseded_url: str
    history_url: str
    evidence_url: str
    has_evidence: bool
    edit_url: str
    # "Delete forever…": its confirmation, for a memory in the trash the user may change.
    purge_url: str
    actions: list[RowAction]

    @property
    def primary_actions(self) -> list[RowAction]:
        return [action for action in self.actions if action.primary]

    @property
    def menu_actions(self) -> list[RowAction]:
        return [action for action in self.actions if not action.primary]


# Any memory id: the URLs of a row are reversed once with it, then filled in per row.
_ID_MARK = 987654321


class _MemoryUrl:
    def __init__(self, name: str) -> None:
        self.prefix, _mark, self.suffix = reverse(name, args=[_ID_MARK]).rpartition(str(_ID_MARK))

    def __call__(self, pk: int) -> str:
        return f"{self.prefix}{pk}{self.suffix}"


def _blocktranslated(translation: str, **values: Any) -> SafeString:
    """A translation with its values filled in and escaped, as {% blocktranslate %} renders it."""
    # Safe: the translation is our own text, and every value is escaped.
    return mark_safe(translation % {name: conditional_escape(v) for name, v in values.items()})


class _RowMaker:
    """Builds the rows of one page: URLs, labels and the search's highlight made once for all."""

    def __init__(self, source: MemoryListSource, query: str) -> None:
        self.source = source
        self.pattern = _highlight_pattern(query) if query else None
        self.url = {
            name: _MemoryUrl(name)
            for name in (
                "memory-history",
                "memory-evidence",
                "memory-edit",
                "memory-pin",
                "memory-review",
                "memory-delete",
                "memory-restore",
                "memory-purge",
            )
        }
        self.project_urls: dict[str, str] = {}
        self.kind_labels = {kind: str(label) for kind, label in Kind.choices}
        self.origin_labels = {origin: str(label) for origin, label in Origin.choices}
        self.scope_labels: dict[str, str] = {Scope.CONVERSATION: gettext("This conversation")}
        self.personal_label = gettext("Personal")
        self.select_label = gettext("Select memory %(id)s")
        self.source_deleted_label = gettext("source deleted")
        self.action_labels = {
            name: gettext(name)
            for name in ("Restore", "Pin", "Unpin", "Accept", "Reject", "Delete")
        }

    def project_url(self, project: Project) -> str:
        if project.slug not in self.project_urls:
            self.project_urls[project.slug] = reverse("project-memories", args=[project.slug])
        return self.project_urls[project.slug]

    def actions(self, memory: Memory, state: str) -> list[RowAction]:
        """The POST buttons of a row the user may change, for the memory's state."""
        pk, label, url = memory.pk, self.action_labels, self.url
        if state in ("trash", "forgotten"):
            return [RowAction(url["memory-restore"](pk), label["Restore"], primary=True)]
        pinned = memory.pinned
        actions = [
            RowAction(
                url["memory-pin"](pk),
                label["Unpin"] if pinned else label["Pin"],
                "pinned",
                "0" if pinned else "1",
            )
        ]
        if state == "pending" and self.source.can_review(memory):
            review = url["memory-review"](pk)
            actions += [
                RowAction(review, label["Accept"], "decision", "accept", primary=True),
                RowAction(review, label["Reject"], "decision", "reject", primary=True),
            ]
        actions.append(RowAction(url["memory-delete"](pk), label["Delete"], danger=True))
        return actions

    def conversation_label(self, memory: Memory) -> SafeString:
        """Which conversation it came from, or that its source was deleted."""
        if memory.conversation is not None:
            return _blocktranslated(gettext("from “%(title)s”"), title=memory.conversation)
        if memory.origin == Origin.EXTRACTED and memory.evidence:
            return _blocktranslated(self.source_deleted_label)
        return mark_safe("")

    def row(self, memory: Memory, found_by_meaning: bool = False) -> MemoryRow:
        pk, state, url = memory.pk, memory.state, self.url
        writable = self.source.can_change(memory)
        project = memory.project if memory.scope == Scope.PROJECT else None
        created = timezone.template_localtime(memory.created_at)  # type: ignore[attr-defined]
        return MemoryRow(
            pk=pk,
            kind=memory.kind,
            state=state,
            pinned=memory.pinned,
            writable=writable,
            found_by_meaning=found_by_meaning,
            select_label=_blocktranslated(self.select_label, id=pk),
            content=mark_matches(memory.content, self.pattern),
            tags=[mark_matches(tag, self.pattern) for tag in memory.tags],
            kind_label=self.kind_labels.get(memory.kind, memory.kind),
            project_name=project.name if project else "",
            project_url=self.project_url(project) if project else "",
            scope_label=self.scope_labels.get(memory.scope, self.personal_label),
            created_iso=date_filter(created, "c"),
            created_title=date_filter(created, "DATETIME_FORMAT"),
            created_ago=naturaltime(memory.created_at),
            when=memory_when(memory),
            used_label=_blocktranslated(
                ngettext("used %(counter)s time", "used %(counter)s times", memory.access_count),
                counter=memory.access_count,
            ),
            importance_percent=round(memory.importance * 100),
            confidence_percent=round(memory.confidence * 100),
            origin_label=self.origin_labels.get(memory.origin, memory.origin),
            conversation_label=self.conversation_label(memory),
            superseded_url=(
                url["memory-history"](memory.superseded_by_id) if memory.superseded_by_id else ""
            ),
            history_url=url["memory-history"](pk),
            evidence_url=url["memory-evidence"](pk),
            has_evidence=bool(memory.evidence),
            edit_url=(
                url["memory-edit"](pk) if writable and state not in ("trash", "forgotten") else ""
            ),
            purge_url=url["memory-purge"](pk) if writable and state == "trash" else "",
            actions=self.actions(memory, state) if writable else [],
        )


def memory_rows(
    ids: Sequence[int],
    source: MemoryListSource,
    query: str = "",
    found_by_meaning: frozenset[int] = frozenset(),
) -> list[MemoryRow]:
    """The rows of the memories ``ids`` in that order, as ``source``'s list shows them.

    Fetched by primary key after the list query chose the ids: the joins then
    touch one page of rows, not every match. Vectors are not shown, so not read.
    """
    by_id = (
        Memory.objects.select_related("project", "conversation")
        .defer("embedding", "search_vector", "search_document")
        .in_bulk(ids)
    )
    maker = _RowMaker(source, query)
    return [maker.row(by_id[pk], pk in found_by_meaning) for pk in ids if pk in by_id]


@dataclass(frozen=True)
class MemoryListSource:
    """Which memories a list shows and where it lives."""

    user: AbstractBaseUser
    # Everything the list may show, in any state.
    visible: MemoryQuerySet
    # What "Clear all" moves to the trash.
    clearable: MemoryQuerySet
    url: str
    # Scope filter choices besides "personal"; empty hides the scope filter.
    projects: Sequence[Project] = ()
    # The project when the list is one project's shared memories.
    project: Project | None = None
    # Whether the user may add, bulk-change and clear here (a project's viewers only read).
    can_write: bool = True
    # The projects whose memories the user may change, of those the list shows.
    writable_projects: Sequence[Project] = ()
    # The projects whose pending memories the user may accept or reject, of those.
    reviewable_projects: Sequence[Project] = ()

    @property
    def writable(self) -> MemoryQuerySet:
        return memories_writable_by(self.user, self.visible)

    @cached_property
    def writable_project_ids(self) -> frozenset[int]:
        return frozenset(project.pk for project in self.writable_projects)

    @cached_property
    def reviewable_project_ids(self) -> frozenset[int]:
        return frozenset(project.pk for project in self.reviewable_projects)

    def can_change(self, memory: Memory) -> bool:
        """Whether the user may change ``memory`` (one of ``visible``), without a query."""
        return can_change_memory(self.user, memory, writable_project_ids=self.writable_project_ids)

    def can_review(self, memory: Memory) -> bool:
        """Whether the user may accept or reject ``memory`` (one of ``visible``), without a query."""
        return can_review_memory(
            self.user, memory, reviewable_project_ids=self.reviewable_project_ids
        )


def search_among(filters: MemoryFilters, queryset: MemoryQuerySet) -> SearchMatch | None:
    """What the search box finds among ``queryset``'s memories under the other filters."""
    return SearchMatch.among(filters.narrow(queryset), filters.q) if filters.q else None


def filtered(
    filters: MemoryFilters, queryset: MemoryQuerySet, search: SearchMatch | None = None
) -> MemoryQuerySet:
    """The search and every other filter but the state: the state is a tab, applied apart
    so every tab has a count.

    ``search``: this ``search_among(filters, queryset)`` when the caller has it already.
    """
    search = search or search_among(filters, queryset)
    queryset = filters.narrow(queryset)
    return queryset.filter(search.condition) if search else queryset


def matching(
    filters: MemoryFilters, queryset: MemoryQuerySet, search: SearchMatch | None = None
) -> MemoryQuerySet:
    """Everything the filters select, in the current state tab."""
    return filters.in_state(filtered(filters, queryset, search))


@dataclass
class Chip:
    value: str
    label: Any
    selected: bool
    querystring: str
    # How many memories of the current tab it shows, under the other filters.
    count: int = 0


@dataclass
class MemoryListPage:
    """One rendering of a list; each part is computed only when a template uses it."""

    source: MemoryListSource
    filters: MemoryFilters

    @cached_property
    def counts(self) -> dict[str, int]:
        """How many memories each state tab holds under the current search, kind and scope."""
        if not self.filters.narrows_by_kind_and_scope_only:
            return self.selected.aggregate(**_STATE_COUNTS)
        slugs = {project.pk: project.slug for project in self.source.projects}
        groups = [
            group
            for group in self._groups
            if self.filters.selects(
                group["kind"], group["scope"], slugs.get(group["project_id"], "")
            )
        ]
        return {state: sum(group[state] for group in groups) for state in STATE_LABELS}

    @property
    def trash_days(self) -> int:
        """After how long the daily job deletes what is in the trash for good."""
        return int(settings.MEMORY_TRASH_DAYS)

    @property
    def is_empty_everywhere(self) -> bool:
        """No memory at all yet, in any state (rather than none matching the filters)."""
        return not self.filters.is_narrowed and not any(self.counts.values())

    @property
    def total(self) -> int:
        return self.counts[self.filters.state]

    @cached_property
    def rows(self) -> list[MemoryRow]:
        """Pages 1..page on a full render; the "load more" fragment asks for one page."""
        ids = list(self.ordered.values_list("pk", flat=True)[: self.filters.page * PAGE_SIZE])
        similar = self.search.by_meaning_only(ids) if self.search else frozenset()
        return memory_rows(ids, self.source, self.filters.q, found_by_meaning=similar)

    @property
    def ordered(self) -> MemoryQuerySet:
        """The memories of the current tab in the order the list shows them."""
        in_tab = self.filters.in_state(self.selected)
        if self.search is not None and self.sort == "relevance":
            return self.search.best_first(in_tab)
        return in_tab.order_by(*SORT_ORDERS[self.sort])

    @cached_property
    def search(self) -> SearchMatch | None:
        return search_among(self.filters, self.source.visible)

    @cached_property
    def selected(self) -> MemoryQuerySet:
        """What search, kind and scope select, in every state."""
        return filtered(self.filters, self.source.visible, self.search)

    @property
    def sort(self) -> str:
        return self.filters.sort_order

    @property
    def search_note(self) -> str:
        """Why the search found only words, when meaning could not be searched."""
        if self.search is None or self.search.degraded is None:
            return ""
        return gettext("Searching by meaning is unavailable right now; showing word matches only.")

    @property
    def page_rows(self) -> list[MemoryRow]:
        return self.rows[(self.filters.page - 1) * PAGE_SIZE :]

    @property
    def shown(self) -> int:
        return len(self.rows)

    @property
    def has_more(self) -> bool:
        return self.shown < self.total and self.filters.page < MAX_PAGES

    @property
    def next_page_querystring(self) -> str:
        return self.filters.querystring(page=self.filters.page + 1)

    @cached_property
    def _groups(self) -> list[dict[str, Any]]:
        """Every visible memory counted by state, grouped by kind, scope and project.

        One pass over the memories: the summary and the tab counts under kind and
        scope filters add these few rows up instead of counting again.
        """
        week_ago = timezone.now() - timedelta(days=7)
        rows: Any = (
            self.source.visible.order_by()
            .values("kind", "scope", "project_id")
            .annotate(
                **_STATE_COUNTS,
                forgotten_this_week=Count(
                    "id", filter=STATE_CONDITIONS["forgotten"] & Q(forgotten_at__gte=week_ago)
                ),
            )
        )
        return list(rows)

    @cached_property
    def summary(self) -> dict[str, Any]:
        """Totals by kind of the active memories, every state, forgotten this week."""
        figures: dict[str, Any] = {
            name: sum(group[name] for group in self._groups)
            for name in (*STATE_LABELS, "forgotten_this_week")
        }
        active_by_kind: dict[str, int] = {}
        for group in self._groups:
            active_by_kind[group["kind"]] = active_by_kind.get(group["kind"], 0) + group["active"]
        figures["kinds"] = [
            {"value": kind, "label": label, "count": active_by_kind.get(kind, 0)}
            for kind, label in Kind.choices
        ]
        return figures

    @property
    def kind_choices(self) -> list[tuple[str, Any]]:
        return list(Kind.choices)

    @cached_property
    def kind_counts(self) -> dict[str, int]:
        """How many memories of each kind the current tab holds under the other filters
        (search, scope): the counts on the kind chips."""
        state = self.filters.state
        any_kind = replace(self.filters, kinds=())
        counts: dict[str, int] = dict.fromkeys(Kind.values, 0)
        if any_kind.narrows_by_kind_and_scope_only:
            slugs = {project.pk: project.slug for project in self.source.projects}
            for group in self._groups:
                if any_kind.selects(
                    group["kind"], group["scope"], slugs.get(group["project_id"], "")
                ):
                    counts[group["kind"]] = counts.get(group["kind"], 0) + group[state]
            return counts
        # The search found its matches among the selected kinds' memories by meaning;
        # its words match in any kind.
        rows = matching(any_kind, self.source.visible, self.search).order_by().values("kind")
        for row in rows.annotate(n=Count("id")):
            counts[row["kind"]] = row["n"]
        return counts

    @property
    def kind_chips(self) -> list[Chip]:
        counts = self.kind_counts
        chips = [
            Chip(
                "",
                _("All"),
                not self.filters.kinds,
                self.filters.querystring(kinds=()),
                sum(counts.values()),
            )
        ]
        for kind, label in Kind.choices:
            selected = kind in self.filters.kinds
            kinds = (
                tuple(k for k in self.filters.kinds if k != kind)
                if selected
                else (
                    *self.filters.kinds,
                    kind,
                )
            )
            chips.append(
                Chip(kind, label, selected, self.filters.querystring(kinds=kinds), counts[kind])
            )
        return chips

    @property
    def state_tabs(self) -> list[dict[str, Any]]:
        return [
            {
                "value": state,
                "label": label,
                "count": self.counts[state],
                "selected": state == self.filters.state,
                "querystring": self.filters.querystring(state=state),
            }
            for state, label in STATE_LABELS.items()
        ]

    @property
    def scope_choices(self) -> list[tuple[str, str]]:
        return [
            (PERSONAL, str(_("Personal"))),
            *((PROJECT_PREFIX + p.slug, p.name) for p in self.source.projects),
        ]

    @property
    def sort_choices(self) -> list[tuple[str, Any, bool]]:
        """(value, label, selected). "Best match" only while searching; the default sort
        (best match, or newest) has the empty value so it stays the default when the
        search changes."""
        default = self.filters.default_sort
        return [
            ("" if value == default else value, label, value == self.filters.sort_order)
            for value, label in SORT_LABELS.items()
            if value != "relevance" or self.filters.q
        ]

    @property
    def clear_filters_querystring(self) -> str:
        return MemoryFilters(state=self.filters.state, sort=self.filters.sort).querystring()


assert tuple(SORT_LABELS) == SORTS, "memory_list.SORT_LABELS out of step with filters.SORTS"
