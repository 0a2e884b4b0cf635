"""The ASGI application: /mcp to the MCP server, /v1/ to the OpenAI-compatible proxy,
everything else (pages, /api/v1/, admin) to Django.

Django's ASGI handler has no lifespan, so the lifespan is answered here: it starts the
MCP SDK's session manager and the proxy's HTTP client, and stops them at shutdown.
"""

from __future__ import annotations

import logging
from typing import Any

from api.gateway import ASGIApp, Receive, Scope, Send
from api.mcp import McpEndpoint
from api.proxy import ProxyEndpoint

logger = logging.getLogger(__name__)


class MemoryAppASGI:
    def __init__(self, django_app: Any):
        self.django: ASGIApp = django_app
        self.mcp = McpEndpoint()
        self.proxy = ProxyEndpoint()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        path = scope.get("path", "")
        if path == McpEndpoint.path or path.startswith(McpEndpoint.path + "/"):
            await self.mcp(scope, receive, send)
        elif path.startswith(ProxyEndpoint.prefix):
            await self.proxy(scope, receive, send)
        else:
            await self.django(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.mcp.start()
                except Exception as exc:
                    logger.exception("memoryapp could not start")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.proxy.stop()
                await self.mcp.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def build_application(django_app: Any) -> MemoryAppASGI:
    return MemoryAppASGI(django_app)
