"""Headless Chromium for the browser tests: Debian's package (never a downloaded browser), driven by Playwright
with a fake microphone and the flags the project's machines need."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

if TYPE_CHECKING:
    from playwright.async_api import ViewportSize

CHROMIUM = "/usr/bin/chromium"
PAGE = Path(__file__).resolve().parents[2] / "clients" / "browser"
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def serve_page(_connection: ServerConnection, request: Request) -> Response | None:
    """``process_request`` for a scripted server: the browser page's files (``/`` is ``index.html``), 404 for
    anything else; ``/ws`` goes on to the WebSocket handler."""
    if request.path == "/ws":
        return None
    path = PAGE / ("index.html" if request.path == "/" else request.path.lstrip("/"))
    if path.parent != PAGE or not path.is_file():
        return Response(HTTPStatus.NOT_FOUND, "Not Found", Headers({"Content-Length": "0"}), b"")
    body = path.read_bytes()
    headers = Headers({"Content-Type": TYPES.get(path.suffix, "application/octet-stream")})
    headers["Content-Length"] = str(len(body))
    return Response(HTTPStatus.OK, "OK", headers, body)


def require_chromium() -> Any:
    """``playwright.async_api``; skips the calling test module when Playwright or Chromium is missing
    (``.ci/run`` installs both)."""
    api = pytest.importorskip("playwright.async_api")
    if shutil.which(CHROMIUM) is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)
    return api


def flags(fake_mic: Path | None = None, *, autoplay: bool = True) -> list[str]:
    """Chromium's command line: no sandbox or GPU, a fake microphone (``fake_mic``: a WAV file it loops), no
    background traffic."""
    args = ["--no-sandbox", "--disable-gpu", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]
    if fake_mic is not None:
        args.append(f"--use-file-for-fake-audio-capture={fake_mic}")
    if autoplay:
        args.append("--autoplay-policy=no-user-gesture-required")
    return [*args, "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextlib.asynccontextmanager
async def chromium_page(args: list[str], viewport: ViewportSize | None = None) -> AsyncIterator[Any]:
    """A fresh page of a headless Chromium launched with ``args``, closed afterwards."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
        try:
            context = await browser.new_context(viewport=viewport) if viewport else await browser.new_context()
            yield await context.new_page()
        finally:
            await browser.close()
