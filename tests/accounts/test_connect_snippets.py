"""The tokens page's "Connect your app" snippets: MCP and the proxy at the user's server address."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

from django.test import Client


def test_snippets_name_this_server_and_the_new_token(alice: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["memory.example.com"]
    client = Client(HTTP_HOST="memory.example.com")
    client.force_login(alice)
    response = client.post("/settings/tokens/new", {"name": "Cursor"})
    body = unescape(client.get(response["Location"]).content.decode())
    secret = body.split('id="new-token">')[1].split("<")[0]

    snippets = dict(re.findall(r'<pre class="snippet" id="([^"]+)">(.*?)</pre>', body, re.S))
    assert set(snippets) >= {
        "connect-claude-code",
        "connect-cursor",
        "connect-claude-desktop",
        "connect-openai",
        "connect-snippet",
    }
    assert (
        "claude mcp add --transport http memoryapp http://memory.example.com/mcp"
        in (snippets["connect-claude-code"])
    )
    cursor = json.loads(snippets["connect-cursor"])["mcpServers"]["memoryapp"]
    assert cursor == {
        "url": "http://memory.example.com/mcp",
        "headers": {"Authorization": f"Bearer {secret}"},
    }
    desktop = json.loads(snippets["connect-claude-desktop"])["mcpServers"]["memoryapp"]
    assert desktop["args"][2:] == [
        "http://memory.example.com/mcp",
        "--header",
        f"Authorization: Bearer {secret}",
    ]
    assert 'base_url="http://memory.example.com/v1"' in snippets["connect-openai"]
    assert f'api_key="{secret}"' in snippets["connect-openai"]
