"""Text contrast of the elements the walk of issue 44 measured under 4.5:1, computed in the
browser from their colours and the background they sit on, in the light and dark themes."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.extraction.runs import execute_run, extraction_request
from memories.services import memory_create
from tests.conftest import browser_login
from tests.extraction_helpers import conversation_with

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# WCAG 2 contrast ratio of an element's text: its colour against the first opaque background
# of it or its ancestors (the page's, at the end).
CONTRAST = """selector => {
  const parse = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const lin = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const element = document.querySelector(selector);
  if (!element) return null;
  let node = element, background = null;
  while (node && node.nodeType === 1) {
    const c = parse(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] === 1)) { background = c.slice(0, 3); break; }
    node = node.parentElement;
  }
  background = background || [255, 255, 255];
  const text = parse(getComputedStyle(element).color).slice(0, 3);
  const [a, b] = [luminance(text), luminance(background)].sort((x, y) => y - x);
  return Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100;
}"""

ELEMENTS = {
    "kind chip count": ".chips .chip:not(.selected) .count",
    "state tab count": ".tabs .tab:not(.selected) .count",
    "link in text": ".page-header p.muted a",
    "notice Dismiss": ".notice-dismiss button",
    "notice Undo": ".notice .notice-actions button",
    "button": "#memory-bulk button[type=submit]",
    "muted text": ".memory-meta time",
}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_contrast_is_at_least_4_5_to_1(
    page: Any, live_server: Any, alice: Any, theme: str
) -> None:
    memory_create(owner=alice, content="Drinks oolong tea", kind="preference", actor=alice)
    conversation = conversation_with(alice, ("user", "I live in Lyon"))
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    browser_login(page, live_server, alice)
    page.context.add_cookies([{"name": "theme", "value": theme, "url": live_server.url}])
    page.goto("/settings/memories")
    ratios = {name: page.evaluate(CONTRAST, selector) for name, selector in ELEMENTS.items()}
    assert None not in ratios.values(), ratios
    assert {name: ratio for name, ratio in ratios.items() if ratio < 4.5} == {}, ratios
