from __future__ import annotations

from typing import Any

import pytest

from memoryapp.services import memory_create
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def test_page_renders(alice: Any, project: Any) -> None:
    memory_create(owner=alice, content="I prefer <b>tea</b> over coffee", kind="preference", tags=["drinks"])
    memory_create(owner=alice, content="项目使用 WGS84 坐标", kind="fact", scope="project", project=project)
    response = client_for(alice).get("/settings/memories")
    assert response.status_code == 200
    open("/tmp/sp/page.html", "w").write(response.content.decode())
    response = client_for(alice).get("/settings/memories?q=te", headers={"HX-Request": "true", "HX-Target": "memory-results"})
    assert response.status_code == 200
    open("/tmp/sp/results.html", "w").write(response.content.decode())
