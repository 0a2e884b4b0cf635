"""The import on /settings/data in a real browser: upload, preview, choices, the progress bars
moving as a worker goes (polled by htmx), the result and Undo; at 1280 and 390 px."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.models import Conversation
from imports import services
from imports.models import Import
from tests.conftest import browser_login, save_screenshot
from tests.imports.helpers import CLAUDE_JSON, DATA, chatgpt_zip

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker_by_hand(monkeypatch: Any) -> list[int]:
    """Jobs wait until the test runs them (one step at a time), as a busy worker would."""
    queued: list[int] = []
    monkeypatch.setattr(services, "enqueue_step", queued.append)
    monkeypatch.setattr(services, "STEP_SECONDS", 0.0)
    monkeypatch.setattr(services, "STORE_BATCH_CONVERSATIONS", 1)
    return queued


def run_one_step(queued: list[int]) -> None:
    services.run_import(queued.pop(0))


def run_all(queued: list[int]) -> None:
    while queued:
        run_one_step(queued)


# The page's "Stored" bar has moved (the card polls every second).
STORED_MOVED = """() => {
    const bar = [...document.querySelectorAll('.import-bar')].find(
        (row) => row.textContent.includes('Stored'));
    return bar !== undefined && Number(bar.querySelector('progress').value) > 0;
}"""


def bar(page: Any, label: str) -> Any:
    return page.locator(".import-bar", has_text=label).locator("progress")


@pytest.mark.parametrize("width", [1280, 390])
def test_preview_progress_result_and_undo(
    page: Any, live_server: Any, alice: Any, worker_by_hand: list[int], tmp_path: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    browser_login(page, live_server, alice)
    page.goto("/settings/data")
    # Only the chosen service's instructions show; the paste box is for saved memories.
    assert page.locator("[data-source-help=chatgpt]").is_visible()
    assert not page.locator("[data-source-help=claude]").is_visible()
    assert not page.locator("#import-text").is_visible()
    export = tmp_path / "chatgpt-export.zip"
    export.write_bytes(chatgpt_zip().read())
    page.set_input_files("#import-file", str(export))
    page.click("text=Read the file")
    card = page.locator(".import-card")
    card.get_by_text("Reading the file").wait_for()
    assert bar(page, "Read").is_visible()
    run_one_step(worker_by_hand)  # The worker reads the file: the card polls, then shows it.
    card.get_by_text("Import 3 conversations").wait_for()
    assert "3 conversations, 7 messages" in card.inner_text()
    assert "English (2), 中文 (1)" in card.inner_text()
    save_screenshot(page, f"import-preview-{width}")

    card.get_by_text("Import 3 conversations").click()
    page.locator(".import-card.import-importing").wait_for()
    assert bar(page, "Stored").get_attribute("value") == "0"
    run_one_step(worker_by_hand)  # One conversation stored.
    page.wait_for_function(STORED_MOVED)
    assert 0 < int(bar(page, "Stored").get_attribute("value")) < 100
    assert bar(page, "Memories built").is_visible()
    save_screenshot(page, f"import-progress-{width}")
    run_all(worker_by_hand)
    result = page.locator(".import-card.import-done")
    result.wait_for()
    assert "3 conversations imported" in result.inner_text()
    assert "3 memories built, 1 replacing an older one" in result.inner_text()
    # Done: polling stopped and the upload form is back.
    assert page.locator("#import-file").is_visible()
    save_screenshot(page, f"import-result-{width}")

    page.once("dialog", lambda dialog: dialog.accept())
    result.get_by_role("button", name="Undo this import").click()
    page.locator(".import-card.import-undoing").wait_for()
    run_one_step(worker_by_hand)
    page.locator(".import-card.import-undone").wait_for()
    assert not Conversation.objects.exists()
    assert "Undone: 3 conversations deleted" in page.locator(".import-card").inner_text()


def test_saved_memories_and_a_refused_file_in_chinese(
    page: Any, live_server: Any, alice: Any, worker_by_hand: list[int], tmp_path: Any
) -> None:
    page.set_viewport_size({"width": 390, "height": 900})
    page.context.add_cookies(
        [{"name": "django_language", "value": "zh-hans", "url": live_server.url}]
    )
    browser_login(page, live_server, alice)
    page.goto("/settings/data")
    assert "导入你的历史" in page.content()
    page.check("input[name=source][value=memories]")
    page.fill("#import-text", (DATA / "claude_memories.md").read_text())
    page.click("text=读取文件")
    page.locator(".import-card.import-analysing").wait_for()
    run_one_step(worker_by_hand)
    page.get_by_text("添加 4 条记忆").wait_for()
    save_screenshot(page, "import-memories-preview-zh-390")
    page.get_by_text("添加 4 条记忆").click()
    page.locator(".import-card.import-importing").wait_for()
    run_all(worker_by_hand)
    page.get_by_text("已添加 4 条记忆").wait_for()
    save_screenshot(page, "import-memories-result-zh-390")

    # A Claude export given as ChatGPT's: refused, saying what it is and what was expected.
    page.check("input[name=source][value=chatgpt]")
    page.set_input_files("#import-file", str(CLAUDE_JSON))
    page.click("text=读取文件")
    page.locator(".import-card.import-analysing").wait_for()
    run_one_step(worker_by_hand)
    refused = page.locator(".import-card.import-invalid")
    refused.wait_for()
    assert "这是一个 Claude 导出，不是你选择的类型" in refused.inner_text()
    save_screenshot(page, "import-refused-zh-390")
    assert Import.objects.filter(status="invalid").count() == 1


@pytest.mark.parametrize("width", [1280, 390])
def test_a_conversations_import_in_chinese(
    page: Any, live_server: Any, alice: Any, worker_by_hand: list[int], tmp_path: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.context.add_cookies(
        [{"name": "django_language", "value": "zh-hans", "url": live_server.url}]
    )
    browser_login(page, live_server, alice)
    page.goto("/settings/data")
    export = tmp_path / "chatgpt-export.zip"
    export.write_bytes(chatgpt_zip().read())
    page.set_input_files("#import-file", str(export))
    page.click("text=读取文件")
    page.locator(".import-card.import-analysing").wait_for()
    run_one_step(worker_by_hand)
    card = page.locator(".import-card")
    card.get_by_text("导入 3 个对话").wait_for()
    text = card.inner_text()
    assert "3 个对话" in text and "7 条消息" in text and "English (2), 中文 (1)" in text
    assert "作为过往对话保留" in text and "从中生成记忆" in text
    save_screenshot(page, f"import-preview-zh-{width}")
    card.get_by_text("导入 3 个对话").click()
    page.locator(".import-card.import-importing").wait_for()
    run_one_step(worker_by_hand)
    assert "已存入" in page.locator(".import-card").inner_text()
    save_screenshot(page, f"import-progress-zh-{width}")
    run_all(worker_by_hand)
    page.locator(".import-card.import-done").wait_for()
    assert "已导入 3 个对话" in page.locator(".import-card").inner_text()
    save_screenshot(page, f"import-result-zh-{width}")
