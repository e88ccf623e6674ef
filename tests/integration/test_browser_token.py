"""The browser page's Token field in real headless Chromium: kept in sessionStorage, sent as ``"token"``.

The page runs under its real Content-Security-Policy; the frames it sends are read from Chromium's own
WebSocket instrumentation, so this checks what leaves the browser, not what the server makes of it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent.front_door.listener import RunningServer
from tests.integration.chromium import chromium_page, flags, require_chromium

pytestmark = pytest.mark.models

playwright_api = require_chromium()

TOKEN = "v1.test-token-from-the-field.sig"


@pytest.fixture
async def page() -> AsyncIterator[Any]:
    async with chromium_page(flags()) as page:
        yield page


async def test_token_field_is_sent_in_messages_and_never_in_urls(server: RunningServer, page: Any) -> None:
    sent: list[dict[str, Any]] = []
    urls: list[str] = []
    csp_errors: list[str] = []

    def on_socket(ws: Any) -> None:
        urls.append(ws.url)
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)) if isinstance(payload, str) else None)

    page.on("websocket", on_socket)
    page.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    await page.goto(server.http_url + "/")
    await playwright_api.expect(page.get_by_test_id("voice-select")).to_be_enabled()
    field = page.get_by_test_id("token")
    await playwright_api.expect(field).to_have_attribute("type", "password")
    await page.wait_for_function("document.querySelector('#voice-list li') !== null")
    assert [m for m in sent if m["type"] == "voices.list" and "token" not in m]  # none typed yet: no field

    await field.fill(TOKEN)
    await field.dispatch_event("change")  # refreshes the voice list with the token
    await page.wait_for_function(
        "() => sessionStorage.getItem('voice-agent.token') === " + json.dumps(TOKEN), timeout=5_000
    )
    await page.get_by_test_id("start").click()
    await playwright_api.expect(page.get_by_test_id("stop")).to_be_enabled(timeout=10_000)
    await page.get_by_test_id("stop").click()

    listed = [m for m in sent if m["type"] == "voices.list" and m.get("token") == TOKEN]
    started = [m for m in sent if m["type"] == "session.start"]
    assert listed, sent
    assert started and started[-1]["token"] == TOKEN, sent
    assert urls and all(TOKEN not in url and "token" not in url for url in urls)
    assert TOKEN not in page.url

    await page.reload()  # same tab: the field is filled from sessionStorage
    await playwright_api.expect(page.get_by_test_id("token")).to_have_value(TOKEN)
    assert not csp_errors, csp_errors
