"""The JSON API at /api/v1/ (django-ninja): token or session auth, one error shape.

Each area adds its router in its own module and registers it below.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.views.decorators.http import require_GET
from ninja import NinjaAPI, Schema

from accounts.models import MemorySettings
from api.auth import BearerToken, BrowserSession
from api.conversations import router as conversations_router
from api.errors import document_errors, install_error_handlers
from api.renderers import FastJSONRenderer
from api.schemas import document_plain_text
from api.throttling import TokenRateThrottle


class Api(NinjaAPI):
    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = document_errors(super().get_openapi_schema(**kwargs))
        document_plain_text(schema)
        return schema


api = Api(
    title="memoryapp API",
    version="1",
    description="Long-term memory for AI assistants. Authenticate with `Authorization: Bearer <token>`.",
    auth=[BearerToken(), BrowserSession()],
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
    # ninja's schema and documentation views would answer any method.
    docs_decorator=require_GET,
    throttle=TokenRateThrottle(),
    renderer=FastJSONRenderer(),
)
install_error_handlers(api)
api.add_router("/", conversations_router)


class MeOut(Schema):
    id: int
    email: str
    memory_enabled: bool
    token_name: str | None


@api.get("/me", response=MeOut, tags=["account"], summary="Who the token belongs to")
def me(request: HttpRequest) -> dict[str, Any]:
    token = getattr(request, "api_token", None)
    return {
        "id": request.user.pk,
        "email": getattr(request.user, "email", ""),
        "memory_enabled": MemorySettings.for_user(request.user).memory_enabled,
        "token_name": token.name if token else None,
    }


api.add_router("", "api.memories.router")
api.add_router("", "api.recall.router")
api.add_router("", "api.commands.router")
api.add_router("", "api.imports.router")
