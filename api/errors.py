"""The API's one error shape: {"error": {"code", "message", "details"}} with a stable code."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.errors import AuthorizationError as NinjaAuthorizationError

logger = logging.getLogger(__name__)

STATUS_CODES = {
    "VALIDATION_ERROR": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "CONFLICT": 409,
    "MEMORY_DISABLED": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "RATE_LIMITED": 429,
    "EMBEDDING_DIMENSION_CONFLICT": 503,
    "INTERNAL_ERROR": 500,
}


class ApiError(Exception):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.status = STATUS_CODES[code]


def error_response(code: str, message: str, details: dict[str, Any] | None = None) -> JsonResponse:
    return JsonResponse(
        {"error": {"code": code, "message": message, "details": details or {}}},
        status=STATUS_CODES[code],
    )


def _validation_details(errors: list[dict[str, Any]]) -> dict[str, Any]:
    fields = []
    for error in errors:
        location = [str(part) for part in error.get("loc", ()) if part not in ("body", "payload")]
        fields.append({"field": ".".join(location), "message": error.get("msg", "invalid")})
    return {"fields": fields}


def install_error_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return error_response(exc.code, exc.message, exc.details)

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        return error_response(
            "VALIDATION_ERROR", "The request is not valid.", _validation_details(exc.errors)
        )

    @api.exception_handler(AuthenticationError)
    def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        return error_response(
            "UNAUTHORIZED", "Send a valid API token as 'Authorization: Bearer <token>'."
        )

    @api.exception_handler(NinjaAuthorizationError)
    def forbidden(request: HttpRequest, exc: Exception) -> HttpResponse:
        return error_response("FORBIDDEN", "You may not do this.")

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return error_response("NOT_FOUND", "Not found.")

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        by_status = {code_status: code for code, code_status in STATUS_CODES.items()}
        code = by_status.get(exc.status_code, "VALIDATION_ERROR")
        if exc.status_code == 429:
            code = "RATE_LIMITED"
        return error_response(code, str(exc))

    @api.exception_handler(Exception)
    def internal_error(request: HttpRequest, exc: Exception) -> HttpResponse:
        logger.exception("API error on %s %s", request.method, request.path)
        return error_response(
            "INTERNAL_ERROR", "Something went wrong on the server; it was logged."
        )
