"""Which memories a list or a search is narrowed to: one object for the pages and the API.

The settings and project pages read ``MemoryFilters`` from their query string
(``from_query``; ``querystring`` writes it back, so a filtered view is a
bookmarkable URL); the API's list and search endpoints validate their
parameters with their own schemas (for OpenAPI) and convert them to this object
in one function (``api.memories.filters_from``); recall (``memories.search.candidates``)
narrows its candidates with ``narrow``. The state conditions are
``models.STATE_CONDITIONS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.http import QueryDict
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.text import CONTROL_CHARACTERS
from memories.models import LISTED_STATES, Kind, MemoryQuerySet, Scope

if TYPE_CHECKING:
    from teams.models import Project

# "Load more" goes this far; beyond it, search or filter.
MAX_PAGES = 50
MAX_QUERY_LENGTH = 200
# The page's scope chips: personal memories, or one project's ("project:<slug>").
PERSONAL = "personal"
PROJECT_PREFIX = "project:"
SORTS = ("relevance", "newest", "last_used", "most_used", "importance")
# The most tags a query string may filter by.
MAX_TAGS = 10


def clean_tag(tag: str) -> str:
    """A tag as memories store it (services.clean_tags): trimmed, lower case, no "#"."""
    return tag.strip().lower().lstrip("#")


def _without_control_characters(params: QueryDict) -> QueryDict:
    """A query string may hold anything, NUL included, which the database cannot compare."""
    clean = QueryDict(mutable=True)
    for key, values in params.lists():
        clean.setlist(key, [CONTROL_CHARACTERS.sub("", value) for value in values])
    return clean


def _moment(value: str) -> datetime | None:
    try:
        when = parse_datetime(value.strip())
    except ValueError:
        return None
    if when is not None and timezone.is_naive(when):
        when = timezone.make_aware(when)
    return when


@dataclass(frozen=True)
class MemoryFilters:
    """Search words, kinds, scopes, projects, tags, creation dates, the state; and, for a
    page, its sort, page number and single memory.

    ``scope`` is the page's scope chip as its URL spells it ("personal", "project:<slug>");
    ``scopes`` and ``project_ids`` are the API's scope and project. ``memory`` narrows the
    list to one memory: the activity feed links to it that way.
    """

    q: str = ""
    kinds: tuple[str, ...] = ()
    scope: str = ""
    scopes: tuple[str, ...] = ()
    project_ids: tuple[int, ...] = ()
    # A memory must carry every one of these tags.
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    # A key of models.STATE_CONDITIONS, or "all".
    state: str = "active"
    # Empty: best match when searching, else newest (``sort_order``).
    sort: str = ""
    page: int = 1
    memory: int = 0

    @classmethod
    def from_query(cls, params: QueryDict, projects: Sequence[Project] = ()) -> MemoryFilters:
        """Read a page's filters from its query string; anything unknown falls back to its
        default."""
        params = _without_control_characters(params)
        kinds = tuple(dict.fromkeys(k for k in params.getlist("kind") if k in Kind.values))
        scopes = {PERSONAL} | {PROJECT_PREFIX + project.slug for project in projects}
        scope = params.get("scope", "")
        state = params.get("state", "")
        sort = params.get("sort", "")
        try:
            page = min(max(int(params.get("page", "1")), 1), MAX_PAGES)
        except ValueError:
            page = 1
        memory = params.get("memory", "")
        tags = tuple(dict.fromkeys(filter(None, map(clean_tag, params.getlist("tag")))))
        return cls(
            q=" ".join(params.get("q", "").split())[:MAX_QUERY_LENGTH],
            kinds=kinds,
            scope=scope if scope in scopes else "",
            tags=tags[:MAX_TAGS],
            created_after=_moment(params.get("created_after", "")),
            created_before=_moment(params.get("created_before", "")),
            state=state if state in LISTED_STATES else "active",
            sort=sort if sort in SORTS else "",
            page=page,
            memory=int(memory) if memory.isdigit() and len(memory) < 19 else 0,
        )

    @classmethod
    def from_url(cls, url: str, projects: Sequence[Project] = ()) -> MemoryFilters:
        query = url.split("?", 1)[1] if "?" in url else ""
        return cls.from_query(QueryDict(query), projects)

    def querystring(self, **changes: Any) -> str:
        """The query string of these filters with ``changes``, defaults left out."""
        filters = replace(self, **changes)
        params = QueryDict(mutable=True)
        if filters.q:
            params["q"] = filters.q
        params.setlist("kind", list(filters.kinds))
        for name, default in (("scope", ""), ("state", "active"), ("sort", "")):
            value = getattr(filters, name)
            if value != default:
                params[name] = value
        params.setlist("tag", list(filters.tags))
        for name in ("created_after", "created_before"):
            when = getattr(filters, name)
            if when is not None:
                params[name] = when.isoformat()
        if filters.memory:
            params["memory"] = str(filters.memory)
        if filters.page > 1:
            params["page"] = str(filters.page)
        return params.urlencode()

    @property
    def narrows_by_kind_and_scope_only(self) -> bool:
        """Whether only kinds and the scope chip narrow (``selects`` can tell what they keep)."""
        return not (
            self.q
            or self.memory
            or self.scopes
            or self.project_ids
            or self.tags
            or self.created_after
            or self.created_before
        )

    @property
    def is_narrowed(self) -> bool:
        """Whether search, kind, scope, tags, dates or a single memory hide some memories."""
        return bool(self.kinds or self.scope or not self.narrows_by_kind_and_scope_only)

    @property
    def default_sort(self) -> str:
        return "relevance" if self.q else "newest"

    @property
    def sort_order(self) -> str:
        """The sort asked for, or the default: best match when searching, else newest."""
        if self.sort == "relevance" and not self.q:
            return self.default_sort
        return self.sort or self.default_sort

    def narrow(self, queryset: MemoryQuerySet) -> MemoryQuerySet:
        """Every filter but the search words and the state: the single memory, kinds,
        scopes, projects, tags and creation dates."""
        if self.memory:
            queryset = queryset.filter(pk=self.memory)
        if self.kinds:
            queryset = queryset.filter(kind__in=self.kinds)
        if self.scope == PERSONAL:
            queryset = queryset.exclude(scope=Scope.PROJECT)
        elif self.scope.startswith(PROJECT_PREFIX):
            queryset = queryset.filter(
                scope=Scope.PROJECT, project__slug=self.scope.removeprefix(PROJECT_PREFIX)
            )
        if self.scopes:
            queryset = queryset.filter(scope__in=self.scopes)
        if self.project_ids:
            queryset = queryset.filter(project_id__in=self.project_ids)
        if self.tags:
            queryset = queryset.filter(tags__contains=list(self.tags))
        if self.created_after:
            queryset = queryset.filter(created_at__gte=self.created_after)
        if self.created_before:
            queryset = queryset.filter(created_at__lt=self.created_before)
        return queryset

    def in_state(self, queryset: MemoryQuerySet) -> MemoryQuerySet:
        return queryset.in_state(self.state)

    def selects(self, kind: str, scope: str, project_slug: str) -> bool:
        """Whether the kind and scope chip filters keep a memory of this kind, scope and
        project (for ``narrows_by_kind_and_scope_only`` filters)."""
        if self.kinds and kind not in self.kinds:
            return False
        if self.scope == PERSONAL:
            return scope != Scope.PROJECT
        if self.scope.startswith(PROJECT_PREFIX):
            return scope == Scope.PROJECT and project_slug == self.scope.removeprefix(
                PROJECT_PREFIX
            )
        return True


# No narrowing at all (the default of recall's ``filters``).
NO_FILTERS = MemoryFilters()
