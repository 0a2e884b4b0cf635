"""A per-token request limit for the JSON API (API_RATE_LIMIT, e.g. "600/min"; empty = off).

Counts live in Django's cache: per process with the default local-memory
cache, shared between processes when CACHES points at Redis or a database.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja.throttling import SimpleRateThrottle


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def __init__(self) -> None:
        # The rate is read per request, so a changed setting takes effect without a restart.
        self.rate = None
        self.num_requests, self.duration = None, None

    def allow_request(self, request: HttpRequest) -> bool:
        rate = settings.API_RATE_LIMIT.strip()
        if not rate:
            return True
        self.rate = rate
        self.num_requests, self.duration = self.parse_rate(rate)
        return super().allow_request(request)

    def get_cache_key(self, request: HttpRequest) -> str | None:
        token = getattr(request, "api_token", None)
        if token is not None:
            ident = f"token-{token.pk}"
        elif request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
