from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class ApiBodySizeLimitMiddleware:
    """Refuse API request bodies over API_MAX_BODY_BYTES before anything reads them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return JsonResponse(
                    {
                        "error": {
                            "code": "PAYLOAD_TOO_LARGE",
                            "message": f"The request body is over {settings.API_MAX_BODY_BYTES} bytes.",
                            "details": {"limit": settings.API_MAX_BODY_BYTES},
                        }
                    },
                    status=413,
                )
        return self.get_response(request)
