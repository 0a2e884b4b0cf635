from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.models import MemorySettings
from accounts.text import TextField
from memories.memory_list import PERSONAL
from memories.models import Kind, Memory
from memories.sensitive import only_secret
from memories.services import clean_tags
from teams.models import Project

MAX_CONTENT_LENGTH = 2000


class MemoryContentForm(forms.Form):
    """What every memory form asks: the statement and its kind."""

    content = TextField(
        label=_("Memory"),
        max_length=MAX_CONTENT_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": _("Write what should be remembered.")},
    )
    kind = forms.ChoiceField(label=_("Kind"), choices=Kind.choices, initial=Kind.FACT)

    def clean_content(self) -> str:
        content = self.cleaned_data["content"].strip()
        if not content:
            raise forms.ValidationError(_("Write what should be remembered."))
        if only_secret(content):
            raise forms.ValidationError(
                _(
                    "This is only a secret (a password, key or token): it is not remembered. "
                    "Keep it in a password manager."
                )
            )
        return content


class MemoryAddForm(MemoryContentForm):
    # Empty: the kind extraction would read in the text ("I prefer…": a preference).
    kind = forms.ChoiceField(
        label=_("Kind"), choices=[("", _("Choose for me")), *Kind.choices], required=False
    )
    where = forms.ChoiceField(label=_("Remember for"))

    def __init__(
        self, *args: Any, projects: Sequence[Project], personal: bool = True, **kwargs: Any
    ) -> None:
        """``personal`` offers "Me" beside ``projects``; without it the form adds to ``projects[0]``."""
        kwargs.setdefault("auto_id", "add-%s")
        super().__init__(*args, **kwargs)
        self.projects = {str(project.pk): project for project in projects}
        where_field = self.fields["where"]
        assert isinstance(where_field, forms.ChoiceField)
        where_field.choices = [
            *([(PERSONAL, _("Me (personal)"))] if personal else []),
            *((pk, project.name) for pk, project in self.projects.items()),
        ]
        if not personal:
            where_field.widget = forms.HiddenInput()
            where_field.initial = next(iter(self.projects), None)

    @property
    def project(self) -> Project | None:
        return self.projects.get(self.cleaned_data["where"])


class MemoryEditForm(MemoryContentForm):
    importance = forms.IntegerField(label=_("Importance (%)"), min_value=0, max_value=100)
    tags = TextField(
        label=_("Tags"), required=False, help_text=_("Separated by commas."), max_length=500
    )
    pinned = forms.BooleanField(label=_("Pinned (always used, never forgotten)"), required=False)
    # The revision the form was made from: a newer one means someone changed the memory meanwhile.
    revision = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    @classmethod
    def for_memory(cls, memory: Memory, **kwargs: Any) -> MemoryEditForm:
        return cls(
            initial={
                "content": memory.content,
                "kind": memory.kind,
                "importance": round(memory.importance * 100),
                "tags": ", ".join(memory.tags),
                "pinned": memory.pinned,
                "revision": memory.revision,
            },
            **kwargs,
        )

    def clean_tags(self) -> list[str]:
        return clean_tags(self.cleaned_data["tags"].split(","))

    def changes(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "content": data["content"],
            "kind": data["kind"],
            "importance": data["importance"] / 100,
            "tags": data["tags"],
            "pinned": data["pinned"],
        }


class MemorySettingsForm(forms.ModelForm):
    class Meta:
        model = MemorySettings
        fields = (
            "memory_enabled",
            "auto_extract",
            "review_extracted",
            "show_citations",
            "reference_past_conversations",
            "never_remember",
        )
        widgets = {"never_remember": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "memory_enabled": _("Assistants remember new things and use what they know about you."),
            "auto_extract": _("Memories are picked out of your conversations automatically."),
            "review_extracted": _(
                "Extracted memories wait in “Pending review” until you accept them."
            ),
            "show_citations": _("Answers say which memories they used."),
            "reference_past_conversations": _(
                "Assistants are also reminded of what was said in your past conversations."
            ),
            "never_remember": _(
                "Topics or words never to remember, one a line: health, work, money, a name or "
                "any word. Nothing that mentions them is stored, however it comes in."
            ),
        }
