from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _


class AccessFilterForm(forms.Form):
    app = forms.ChoiceField(label=_("App"), required=False)
    since = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: Any, apps: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["app"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", _("All apps")), *apps]


class RecallPreviewForm(forms.Form):
    message = forms.CharField(
        max_length=2000,
        error_messages={"required": _("Type a message to see what would be recalled.")},
    )
