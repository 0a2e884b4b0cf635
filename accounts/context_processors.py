"""What base.html needs on every page: the colour theme chosen in the header."""

from __future__ import annotations

from django.http import HttpRequest

THEME_COOKIE = "theme"
THEMES = ("system", "light", "dark")


def theme_of(request: HttpRequest) -> str:
    value = request.COOKIES.get(THEME_COOKIE, "system")
    return value if value in THEMES else "system"


def ui(request: HttpRequest) -> dict[str, str]:
    return {"theme": theme_of(request)}
