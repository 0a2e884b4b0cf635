from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from api.errors import generic_error


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


class ApiJsonErrorsMiddleware:
    """Turn any non-JSON error under /api/ (a 405 from ninja, a CSRF 403, a 500 page) into JSON.

    The docs page and the OpenAPI document are the API's only non-JSON answers.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not request.path.startswith("/api/")
            or response.status_code < 400
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        code, message = generic_error(response.status_code)
        details = {}
        if response.status_code == 405 and response.has_header("Allow"):
            details["allowed"] = [m.strip() for m in response["Allow"].split(",")]
        json_response = JsonResponse(
            {"error": {"code": code, "message": message, "details": details}},
            status=response.status_code,
        )
        for header in ("Allow", "Retry-After"):
            if response.has_header(header):
                json_response[header] = response[header]
        return json_response
