from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin

from config.demo import create_demo_user
from tests.conftest import client_for


@pytest.mark.django_db
def test_every_admin_list_and_add_page_loads_with_demo_data() -> None:
    superuser, _created = create_demo_user()
    client = client_for(superuser)
    for model in admin.site._registry:
        opts = model._meta
        base = f"/admin/{opts.app_label}/{opts.model_name}/"
        assert client.get(base).status_code == 200, base
        assert client.get(base + "?q=survey").status_code == 200, base
        first = model._default_manager.first()
        if first is not None:
            assert client.get(f"{base}{first.pk}/change/").status_code == 200, base
        assert client.get(base + "add/").status_code in (200, 403), base


def test_the_admin_is_for_staff_only(alice: Any) -> None:
    assert client_for(alice).get("/admin/memoryapp/memory/").status_code == 302


@pytest.mark.django_db
def test_each_admin_section_has_its_own_title() -> None:
    import re

    superuser, _created = create_demo_user()
    html = client_for(superuser).get("/admin/").content.decode()
    captions = re.findall(r'<caption>\s*<a [^>]*class="section"[^>]*>([^<]+)</a>', html)
    assert len(captions) >= 5
    assert len(captions) == len({caption.strip().lower() for caption in captions}), captions


@pytest.mark.django_db
def test_the_memory_list_shows_few_columns_and_short_content() -> None:
    from memories.admin import MemoryAdmin
    from memories.models import Memory

    superuser, _created = create_demo_user()
    assert len(MemoryAdmin.list_display) <= 8
    memory = Memory.objects.first()
    assert memory is not None
    memory.content = "word " * 60
    short = MemoryAdmin(Memory, admin.site).short_content(memory)
    assert len(short) <= 60 and short.endswith("…")
    page = client_for(superuser).get("/admin/memoryapp/memory/").content.decode()
    head = page.split('id="result_list"')[1].split("</thead>")[0]
    assert head.count('<th scope="col"') <= 9  # the columns and the select box


@pytest.mark.django_db
def test_the_admin_speaks_chinese_and_names_the_product() -> None:
    """Not "Django 管理", nor app or model names left in English ("Api tokens": issue 44 item 15)."""
    superuser, _created = create_demo_user()
    html = client_for(superuser).get("/admin/", headers={"Accept-Language": "zh-hans"})
    page = html.content.decode()
    assert "memoryapp 管理" in page and "Django 管理" not in page
    import re

    captions = re.findall(r'<caption>\s*<a [^>]*class="section"[^>]*>([^<]+)</a>', page)
    assert not {"Memories", "Conversations", "Recall", "Imports"} & set(captions), captions
    rows = re.findall(r'<th scope="row"[^>]*>\s*<a [^>]*>([^<]+)</a>', page)
    models = {name.strip() for name in rows}
    assert {"API 令牌", "记忆", "对话", "提取任务", "导入", "项目", "团队"} <= models, models
    assert not re.search(r">\s*(?:Api tokens|Memories|Extraction runs|Memory events)\s*<", page)
