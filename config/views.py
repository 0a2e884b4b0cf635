from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from api.errors import error_response


def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("memory-list")
    return render(request, "home.html")


def api_not_found(request: HttpRequest) -> HttpResponse:
    return error_response("NOT_FOUND", f"No API endpoint at {request.path}.")
