from __future__ import annotations

import re

import pytest

from config.demo import create_demo_user
from memories.permissions import memories_visible_to


@pytest.mark.django_db
def test_demo_user_gets_a_dozen_bilingual_memories_across_kinds_and_scopes_once() -> None:
    user, created = create_demo_user()
    assert created
    memories = memories_visible_to(user)
    assert memories.count() >= 12
    assert len(set(memories.values_list("kind", flat=True))) == 7
    assert set(memories.values_list("scope", flat=True)) == {"user", "project"}
    contents = list(memories.values_list("content", flat=True))
    assert any(re.search(r"[\u4e00-\u9fff]", text) for text in contents)
    assert any(text.isascii() for text in contents)
    assert create_demo_user() == (user, False)
    assert memories_visible_to(user).count() == len(contents)
