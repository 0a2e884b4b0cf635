"""HTTP POSTs with a deadline for the whole request.

``urlopen``'s timeout is the socket's: it bounds each read, and restarts with every byte
that arrives, so an endpoint that trickles its answer (a byte a second, in its headers or
its body) holds the caller for as long as it likes. Here a watchdog timer shuts the
request's socket down when ``timeout`` seconds have passed since the request began
(connecting, sending, waiting and reading all count): the read under way returns at once
and the call raises ``DeadlineExceeded``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


class DeadlineExceeded(TimeoutError):
    """The whole request took longer than its deadline."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


class _Sockets:
    """The sockets a request opened, shut down together when its deadline passes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self.expired = False

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._open)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already
        sock.shutdown(socket.SHUT_RDWR)


def _watched(base: type[http.client.HTTPConnection], sockets: _Sockets) -> Any:
    class Watched(base):  # type: ignore[valid-type, misc]
        def connect(self) -> None:
            super().connect()
            sockets.add(self.sock)

    return Watched


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, sockets: _Sockets) -> None:
        super().__init__()
        self.sockets = sockets

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.sockets), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, sockets: _Sockets) -> None:
        super().__init__()
        self.sockets = sockets

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(
            _watched(http.client.HTTPSConnection, self.sockets),
            req,
            context=self._context,  # type: ignore[attr-defined]
        )


def post(url: str, data: bytes, headers: dict[str, str], *, timeout: float) -> Answer:
    """POST ``data`` and read the whole answer, of any HTTP status, within ``timeout`` seconds.

    Raises ``DeadlineExceeded`` when the deadline passes, and what ``urlopen`` raises
    (``urllib.error.URLError``, ``OSError``) when the endpoint cannot be reached.
    """
    sockets = _Sockets()
    opener = urllib.request.build_opener(_HTTPHandler(sockets), _HTTPSHandler(sockets))
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    watchdog = threading.Timer(timeout, sockets.expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        try:
            with opener.open(request, timeout=timeout) as response:
                answer = Answer(response.status, response.read())
        except urllib.error.HTTPError as exc:
            with exc:
                answer = Answer(exc.code, exc.read())
    except (OSError, http.client.HTTPException) as exc:
        if sockets.expired:
            raise DeadlineExceeded(f"no complete answer within {timeout:g} s") from exc
        if isinstance(exc, http.client.HTTPException):
            raise urllib.error.URLError(f"{type(exc).__name__}: {exc}") from exc
        raise
    finally:
        watchdog.cancel()
    # A socket shut down mid-body can also read as an answer cut short without an error.
    if sockets.expired:
        raise DeadlineExceeded(f"no complete answer within {timeout:g} s")
    return answer
