from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.text import TextField


class TokenForm(forms.Form):
    name = TextField(
        label=_("Token name"),
        max_length=100,
        help_text=_("Where it will be used, e.g. “Laptop chat app”."),
    )
