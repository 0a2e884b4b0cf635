from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from accounts.text import CONTROL_CHARACTERS_MESSAGE, has_control_characters
from api.errors import error_response, generic_error

# Endpoints that take a file (multipart/form-data, read as a stream to disk) and the setting
# that bounds their body instead of API_MAX_BODY_BYTES.
UPLOAD_ENDPOINTS = {"/api/v1/imports": "IMPORT_MAX_BYTES"}


# JSON nested deeper than this is refused (400): nothing the API or the proxy reads nests
# beyond a few levels, and walking a deeper one would exhaust Python's recursion.
MAX_JSON_DEPTH = 64


class JsonTooDeep(ValueError):
    pass


def json_depth(value: Any) -> int:
    """How many levels of arrays and objects ``value`` nests (counted without recursion)."""
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return depth - 1


def read_json(body: bytes) -> Any:
    """``body`` parsed: ValueError when it is not JSON, JsonTooDeep when it nests deeper
    than MAX_JSON_DEPTH."""
    try:
        value = json.loads(body)
    except RecursionError as exc:
        raise JsonTooDeep from exc
    if json_depth(value) > MAX_JSON_DEPTH:
        raise JsonTooDeep
    return value


def is_upload(request: HttpRequest) -> bool:
    return (
        request.method == "POST"
        and request.path in UPLOAD_ENDPOINTS
        and request.content_type == "multipart/form-data"
    )


def body_limit(request: HttpRequest) -> int:
    if is_upload(request):
        return int(getattr(settings, UPLOAD_ENDPOINTS[request.path]))
    return int(settings.API_MAX_BODY_BYTES)


class ApiBodySizeLimitMiddleware:
    """Refuse API request bodies over their limit (API_MAX_BODY_BYTES, or an upload
    endpoint's) before anything reads them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = body_limit(request)
            if length > limit:
                return JsonResponse(
                    {
                        "error": {
                            "code": "PAYLOAD_TOO_LARGE",
                            "message": f"The request body is over {limit} bytes.",
                            "details": {"limit": limit},
                        }
                    },
                    status=413,
                )
        return self.get_response(request)


def control_character_paths(value: Any, path: tuple[str, ...] = ()) -> Iterator[str]:
    """The dotted path of every string (or object key) in a JSON value holding a control character."""
    if isinstance(value, str):
        if has_control_characters(value):
            yield ".".join(path)
    elif isinstance(value, dict):
        for key, item in value.items():
            if has_control_characters(key):
                yield ".".join((*path, key))
            else:
                yield from control_character_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from control_character_paths(item, (*path, str(index)))


def control_characters_refusal(fields: list[str]) -> tuple[str, dict[str, Any]]:
    """The VALIDATION_ERROR's message and details for control characters in ``fields``."""
    message = str(CONTROL_CHARACTERS_MESSAGE)
    return (
        "Control characters (such as NUL) are not allowed; tab, CR and LF are.",
        {"fields": [{"field": field, "message": message} for field in fields]},
    )


class ApiRequestChecksMiddleware:
    """A body that is not JSON is refused (415). Control characters (NUL above all, which
    PostgreSQL cannot store) are refused anywhere in an API request's query string or JSON
    body: one check for every field and parameter. Tab, CR and LF are ordinary text
    (accounts.text)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            fields = [
                key
                for key, values in request.GET.lists()
                if has_control_characters(key) or any(map(has_control_characters, values))
            ]
            # An upload's file is read as a stream by its endpoint (which cleans its text).
            if not is_upload(request):
                if request.body and request.content_type != "application/json":
                    code, message = generic_error(415)
                    return error_response(code, message, {"content_type": request.content_type})
                if request.body:
                    try:
                        body = read_json(request.body)
                    except JsonTooDeep:
                        return error_response(
                            "VALIDATION_ERROR",
                            f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels.",
                        )
                    except ValueError:
                        body = None  # ninja answers it
                    fields.extend(control_character_paths(body))
            if fields:
                return error_response("VALIDATION_ERROR", *control_characters_refusal(fields))
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
