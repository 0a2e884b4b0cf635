from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import ALL_SCOPES, TokenLimit, TokenScope
from accounts.text import TextField

# How long a new token lasts: (choice, days; None for ever).
EXPIRY_DAYS = {"never": None, "7": 7, "30": 30, "90": 90, "365": 365}


class TokenForm(forms.Form):
    name = TextField(
        label=_("Token name"),
        max_length=100,
        help_text=_("Where it will be used, e.g. “Laptop chat app”."),
    )
    scopes = forms.MultipleChoiceField(
        label=_("It may"),
        choices=TokenScope.choices,
        initial=ALL_SCOPES,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    # Sent by the page's form: no scope ticked there is a mistake, while a post naming
    # only the token (a script) asks for a full-scope token as before.
    scopes_shown = forms.BooleanField(required=False, widget=forms.HiddenInput)
    limit = forms.ChoiceField(
        label=_("Memories it sees"),
        choices=[(TokenLimit.NONE.value, TokenLimit.NONE.label)],
        required=False,
        initial="",
    )
    expiry = forms.ChoiceField(
        label=_("Expires"),
        choices=[
            ("never", _("Never")),
            ("7", _("In 7 days")),
            ("30", _("In 30 days")),
            ("90", _("In 90 days")),
            ("365", _("In a year")),
        ],
        initial="never",
        required=False,
    )

    def __init__(self, *args: Any, projects: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.projects = {str(project.pk): project for project in projects or []}
        field = self.fields["limit"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (TokenLimit.NONE.value, TokenLimit.NONE.label),
            (TokenLimit.PERSONAL.value, TokenLimit.PERSONAL.label),
            *(
                (f"project:{pk}", _("Project “%(name)s” only") % {"name": project.name})
                for pk, project in self.projects.items()
            ),
        ]

    def clean_scopes(self) -> list[str]:
        scopes: list[str] = self.cleaned_data.get("scopes") or []
        if scopes:
            return scopes
        if self.data.get("scopes_shown"):
            raise forms.ValidationError(_("Choose at least one thing the token may do."))
        return list(ALL_SCOPES)

    def token_options(self) -> dict[str, Any]:
        """The ApiToken.issue options the form chose."""
        limit = self.cleaned_data.get("limit") or ""
        project = None
        if limit.startswith("project:"):
            project = self.projects[limit.removeprefix("project:")]
            limit = TokenLimit.PROJECT.value
        days = EXPIRY_DAYS[self.cleaned_data.get("expiry") or "never"]
        return {
            "scopes": [scope for scope in ALL_SCOPES if scope in self.cleaned_data["scopes"]],
            "limit": limit,
            "limit_project": project,
            "expires_at": timezone.now() + timedelta(days=days) if days else None,
        }
