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
