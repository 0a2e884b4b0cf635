from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest


class AuthenticatedHttpRequest(HttpRequest):
    """The request of a view behind @login_required: its user is a real User."""

    user: User
