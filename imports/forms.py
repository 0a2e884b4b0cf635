from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from accounts.text import TextField
from imports.formats import MAX_MEMORY_TEXT_BYTES
from imports.models import Source


class ImportForm(forms.Form):
    """What to import: a service's export, or saved memories uploaded or pasted."""

    source = forms.ChoiceField(
        label=_("What are you importing?"),
        choices=[
            (Source.CHATGPT, _("ChatGPT conversations")),
            (Source.CLAUDE, _("Claude conversations")),
            (Source.MEMORIES, _("Saved memories (ChatGPT or Claude)")),
        ],
        initial=Source.CHATGPT,
        widget=forms.RadioSelect,
    )
    file = forms.FileField(label=_("File"), required=False)
    text = TextField(
        label=_("Or paste your saved memories"),
        required=False,
        max_length=MAX_MEMORY_TEXT_BYTES // 4,
        widget=forms.Textarea(attrs={"rows": 4}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "import-%s")
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        upload, text = cleaned.get("file"), cleaned.get("text", "").strip()
        source = cleaned.get("source")
        if upload is not None and (upload.size or 0) > settings.IMPORT_MAX_BYTES:
            self.add_error(
                "file",
                _("The file is larger than %(limit)s, the most this server accepts.")
                % {"limit": filesizeformat(settings.IMPORT_MAX_BYTES)},
            )
        elif source == Source.MEMORIES and upload is None and not text:
            self.add_error("text", _("Choose a file, or paste the memories here."))
        elif source != Source.MEMORIES and upload is None:
            self.add_error("file", _("Choose the export's .zip or its conversations.json."))
        cleaned["text"] = text
        return cleaned


class ChoicesForm(forms.Form):
    """What to do with the conversations of an export."""

    keep_conversations = forms.BooleanField(required=False)
    build_memories = forms.BooleanField(required=False)
