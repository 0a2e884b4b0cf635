from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

# An htmx request's invalid input is answered 422, not 400: under DEBUG django-htmx's error
# handler shows a 400 answer as a whole page, where the form should re-render in place
# (base.html has htmx swap 422 answers).
HTMX_INVALID_INPUT = 422


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """The request of a view behind @login_required: its user is a real User."""

    user: User
