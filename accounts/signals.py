from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import translation

from accounts.models import MemorySettings

# Where the language saved on the account waits for accounts.middleware.
LANGUAGE_SESSION_KEY = "user_language"


def supported_language(code: str) -> bool:
    return code in dict(settings.LANGUAGES)


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def create_memory_settings(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if created:
        MemorySettings.objects.get_or_create(
            user=instance, defaults=MemorySettings.server_defaults()
        )


@receiver(user_logged_in)
def restore_language(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """Logging in brings back the language saved on the account (and its cookie)."""
    if request is None or not hasattr(request, "session"):
        return
    language = (
        MemorySettings.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    )
    if language and supported_language(language):
        request.session[LANGUAGE_SESSION_KEY] = language
        translation.activate(language)
