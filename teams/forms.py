from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.text import TextField
from teams.models import Role


class TeamForm(forms.Form):
    name = TextField(label=_("Team name"), max_length=100)


class ProjectForm(forms.Form):
    name = TextField(label=_("Project name"), max_length=100)


class InvitationForm(forms.Form):
    email = forms.EmailField(label=_("Email"))
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.MEMBER)

    def __init__(self, *args: Any, roles: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = roles  # type: ignore[attr-defined]


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)
