"""The API's one error shape: {"error": {"code", "message", "details"}} with a stable code."""

from __future__ import annotations

import logging
from typing import Any

from django.db import InterfaceError, OperationalError, connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.errors import AuthorizationError as NinjaAuthorizationError
from psycopg_pool import PoolTimeout

from memories.gate import NeverRemember
from memories.sensitive import SensitiveContent

logger = logging.getLogger(__name__)

# Every code and its status. Several codes share a status (409: CONFLICT for a stale
# revision, MEMORY_DISABLED when memory is off), so whoever refuses a request names
# its code (ApiError); a status alone never picks one of them.
STATUS_CODES = {
    "VALIDATION_ERROR": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "TOKEN_PAUSED": 403,
    "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "CONFLICT": 409,
    "MEMORY_DISABLED": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "SENSITIVE_CONTENT": 422,
    "NEVER_REMEMBER": 422,
    "RATE_LIMITED": 429,
    "EMBEDDING_DIMENSION_CONFLICT": 503,
    "INTERNAL_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
}
# Seconds a client should wait before trying again when the database is unavailable, and
# when every pooled connection is in use (the server sheds load: config/database.py).
RETRY_AFTER_SECONDS = 30
BUSY_RETRY_AFTER_SECONDS = 1

# The code and message for an error that came with a status only (ninja's HttpError,
# or a non-JSON page the middleware turns into JSON): the generic code of each status.
GENERIC_ERRORS = {
    400: ("VALIDATION_ERROR", "The request is not valid."),
    401: ("UNAUTHORIZED", "Send a valid API token as 'Authorization: Bearer <token>'."),
    403: ("FORBIDDEN", "You may not do this."),
    404: ("NOT_FOUND", "Not found."),
    405: ("METHOD_NOT_ALLOWED", "This endpoint does not accept that method."),
    409: ("CONFLICT", "The request conflicts with the current state; read it again."),
    413: ("PAYLOAD_TOO_LARGE", "The request body is too large."),
    415: ("UNSUPPORTED_MEDIA_TYPE", "Send the body as JSON with Content-Type: application/json."),
    429: ("RATE_LIMITED", "Too many requests; slow down."),
    503: ("SERVICE_UNAVAILABLE", "The database is unavailable; try again shortly."),
}
INTERNAL_ERROR = ("INTERNAL_ERROR", "Something went wrong on the server.")


def generic_error(status: int) -> tuple[str, str]:
    """(code, message) for an error known only by its status."""
    if status in GENERIC_ERRORS:
        return GENERIC_ERRORS[status]
    return INTERNAL_ERROR if status >= 500 else GENERIC_ERRORS[400]


class ApiError(Exception):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.status = STATUS_CODES[code]


def database_unavailable(exc: BaseException) -> tuple[str, int] | None:
    """For a database error: what to tell the client and the seconds before it tries again
    (the database away, or every pooled connection in use); None for any other error."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    pool = getattr(connection, "pool", None)
    if isinstance(exc.__cause__, PoolTimeout) and pool is not None:
        stats = pool.get_stats()
        if stats["pool_size"] >= stats["pool_max"]:
            return "The server is busy; try again in a moment.", BUSY_RETRY_AFTER_SECONDS
    return "The database is unavailable; try again shortly.", RETRY_AFTER_SECONDS


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

    @api.exception_handler(NeverRemember)
    def never_remember(request: HttpRequest, exc: NeverRemember) -> HttpResponse:
        return error_response(
            "NEVER_REMEMBER",
            "This text falls under a topic or word the user's memory settings say never to "
            "remember; it is not stored.",
            {"rule": exc.rule},
        )

    @api.exception_handler(SensitiveContent)
    def sensitive_content(request: HttpRequest, exc: SensitiveContent) -> HttpResponse:
        return error_response(
            "SENSITIVE_CONTENT",
            "This text is only a secret (a password, key or token); it is not stored. "
            "Text that holds a secret among other words is stored with the secret redacted.",
            {"kinds": exc.kinds},
        )

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        return error_response(
            "VALIDATION_ERROR", "The request is not valid.", _validation_details(exc.errors)
        )

    @api.exception_handler(MultiPartParserError)
    def bad_multipart(request: HttpRequest, exc: MultiPartParserError) -> HttpResponse:
        return error_response("VALIDATION_ERROR", f"The multipart body is not valid: {exc}")

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
        code, _message = generic_error(exc.status_code)
        return JsonResponse(
            {"error": {"code": code, "message": str(exc), "details": {}}},
            status=exc.status_code,
        )

    @api.exception_handler(Exception)
    def internal_error(request: HttpRequest, exc: Exception) -> HttpResponse:
        unavailable = database_unavailable(exc)
        if unavailable is not None:
            message, retry_after = unavailable
            logger.warning("%s %s %s: %s", message, request.method, request.path, exc)
            response = error_response("SERVICE_UNAVAILABLE", message)
            response["Retry-After"] = str(retry_after)
            return response
        logger.exception("API error on %s %s", request.method, request.path)
        return error_response(
            "INTERNAL_ERROR", "Something went wrong on the server; it was logged."
        )


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "enum": sorted(STATUS_CODES)},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
        }
    },
}


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Every error status the API answers, listed on every operation of the OpenAPI
    document with the one error shape (any endpoint may be rate limited, find the
    database down, get a body too large or of the wrong type, and so on)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorOut"] = ERROR_SCHEMA
    statuses: dict[int, list[str]] = {}
    for code, status in STATUS_CODES.items():
        statuses.setdefault(status, []).append(code)
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, codes in sorted(statuses.items()):
                # ninja keys its own responses by int: the same status as text would be a
                # second "409" in the JSON, which OpenAPI tools (Swagger UI) refuse.
                if status in responses:
                    continue
                responses.setdefault(
                    str(status),
                    {
                        "description": " or ".join(codes),
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ErrorOut"}
                            }
                        },
                    },
                )
    return schema
