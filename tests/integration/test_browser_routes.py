"""The page and its assets over real HTTP (no browser needed)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

from agent.front_door.listener import RunningServer


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


async def test_page_and_assets_are_served_with_safe_headers(server: RunningServer) -> None:
    status, headers, body = await asyncio.to_thread(_get, server.http_url + "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    for testid in ("start", "stop", "status", "voice-select"):
        assert f'data-testid="{testid}"'.encode() in body
    for asset, kind in [
        ("/app.js", "text/javascript"),
        ("/capture-worklet.js", "text/javascript"),
        ("/player-worklet.js", "text/javascript"),
        ("/styles.css", "text/css"),
    ]:
        status, headers, body = await asyncio.to_thread(_get, server.http_url + asset)
        assert status == 200 and headers["Content-Type"].startswith(kind) and body, asset
        assert headers["X-Content-Type-Options"] == "nosniff"
    for missing in ("/../pyproject.toml", "/nope.js", "/browser/app.js"):
        status, _, _ = await asyncio.to_thread(_get, server.http_url + missing)
        assert status == 404, missing
