"""A signed-in person's pages come in the language they chose, on any device.

Django's ``set_language`` view only sets a cookie for this browser. The language
chosen from the menu is also saved on the user's MemorySettings; logging in copies
it to the session, and every later request is answered in it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import translation

from accounts.models import MemorySettings
from accounts.signals import LANGUAGE_SESSION_KEY as SESSION_KEY
from accounts.signals import supported_language as _supported


class UserLanguageMiddleware:
    """After AuthenticationMiddleware: activates the user's saved language and saves a new choice."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Only a logged-in session holds the key (logging out flushes it).
        try:
            saved = request.session.get(SESSION_KEY, "")
        except DatabaseError:
            # The database is away: the view says so (a 503), or /healthz answers anyway.
            saved = ""
        if saved and _supported(saved):
            translation.activate(saved)
            request.LANGUAGE_CODE = saved
        response = self.get_response(request)
        if (
            request.method == "POST"
            and request.path == reverse("set_language")
            and response.status_code in (200, 302)
            and request.user.is_authenticated
        ):
            chosen = request.POST.get("language", "")
            if _supported(chosen):
                MemorySettings.objects.filter(user_id=request.user.pk).update(language=chosen)
                request.session[SESSION_KEY] = chosen
        return response
