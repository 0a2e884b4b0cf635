"""The ``openai`` SDK for the OpenAI-compatible endpoints memoryapp calls, with a deadline for
a whole call.

The SDK's timeout is httpx's: it bounds each connect, write and read, and a read's restarts
with every byte that arrives, so an endpoint that trickles its answer (a byte a second, in
its headers or its body) holds the caller for as long as it likes; and the SDK sleeps before
each retry (0.5 s, doubled each time). Here every socket operation of a call, and every sleep
before one of its retries, ends by the call's deadline: ``Endpoint.timeout`` seconds after
``Endpoint.call()`` began, retries included. Past it the SDK raises ``openai.APITimeoutError``.

The deadline lives in a context variable that the SDK's connections read (``_DeadlineStream``),
so one cached client (its connection pool, its TLS context) serves every call.
"""

from __future__ import annotations

import functools
import os
import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2
import openai

_DEADLINE: ContextVar[float | None] = ContextVar("openai_call_deadline", default=None)

# The SDK refuses to build a client without a key; endpoints such as Ollama need none, and
# get no Authorization header at all (``Endpoint.headers``).
_NO_KEY = "no-key"


def _left() -> float | None:
    """Seconds until the deadline of the call under way (None: there is none)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


def _within(timeout: float | None, expired: type[httpcore2.TimeoutException]) -> float | None:
    """A socket operation's timeout, shortened to end by the deadline; past it, ``expired``."""
    left = _left()
    if left is None:
        return timeout
    if left <= 0:
        raise expired("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _within(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _within(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _within(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.SyncBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _within(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(
            super().connect_tcp(host, port, timeout, local_address, socket_options)
        )


class _DeadlineTransport(httpx2.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        # httpx2's transport takes no network backend, its connection pool does.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(), network_backend=_DeadlineBackend()
        )


class _DeadlineClient(openai.OpenAI):
    def _calculate_retry_timeout(self, *args: Any, **kwargs: Any) -> float:
        """The SDK's backoff before a retry, ending by the deadline at the latest (a retry
        then fails at once with APITimeoutError)."""
        backoff = super()._calculate_retry_timeout(*args, **kwargs)
        left = _left()
        return backoff if left is None else max(0.0, min(backoff, left))


@functools.lru_cache(maxsize=16)
def _client(base_url: str, api_key: str, timeout: float, max_retries: int) -> openai.OpenAI:
    return _DeadlineClient(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        max_retries=max_retries,
        http_client=httpx2.Client(transport=_DeadlineTransport()),
    )


# A process forked with a client (the worker's) makes its own: two processes on one
# pooled connection would read each other's answers.
os.register_at_fork(after_in_child=_client.cache_clear)


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint (``base_url`` ends in ``/v1`` or the like): its key
    (empty: none is sent), the seconds one call may take (its retries included) and the SDK's
    retries of a call that failed for a moment (timeouts, 408, 409, 429, 5xx)."""

    base_url: str
    api_key: str
    timeout: float
    max_retries: int = 0

    @property
    def sdk_key(self) -> str:
        """The key to give an SDK client."""
        return self.api_key or _NO_KEY

    @property
    def headers(self) -> dict[str, Any]:
        """``extra_headers`` of every request: without a key, no Authorization header."""
        return {} if self.api_key else {"Authorization": openai.omit}

    @contextmanager
    def call(self) -> Iterator[openai.OpenAI]:
        """A client whose requests, retries included, end by ``timeout`` seconds from now."""
        token = _DEADLINE.set(time.monotonic() + self.timeout)
        try:
            yield _client(self.base_url, self.sdk_key, self.timeout, self.max_retries)
        finally:
            _DEADLINE.reset(token)
