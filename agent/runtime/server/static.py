"""The browser page: ``GET /`` and its assets, served from ``clients/browser`` (no build step).

Files are read once at start-up into memory (a few tens of KiB); only names in that directory are served,
so no path from the request ever reaches the file system.
"""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

from agent.runtime.server.responses import secured

BROWSER_DIR = Path(__file__).resolve().parents[3] / "clients" / "browser"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
# The page talks only to its own origin ('self' covers ws:/wss: to the same host and port in CSP 3); its
# scripts and AudioWorklet modules are files from this directory, never inline; it cannot be framed.
CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; media-src 'self' blob:; img-src 'self' data:; "
    "style-src 'self'; worker-src 'self' blob:; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("Permissions-Policy", "microphone=(self), camera=(), geolocation=(), payment=(), usb=()"),
)


class StaticFiles:
    """``response(path)`` answers ``/`` and ``/<asset>`` from the page directory, else ``None``."""

    def __init__(self, directory: Path = BROWSER_DIR) -> None:
        self._files: dict[str, tuple[str, bytes]] = {}
        if directory.is_dir():
            for file in directory.iterdir():
                kind = _TYPES.get(file.suffix)
                if file.is_file() and kind is not None:
                    self._files["/" + file.name] = (kind, file.read_bytes())
        if "/index.html" in self._files:
            self._files["/"] = self._files["/index.html"]

    def response(self, path: str) -> Response | None:
        found = self._files.get(path)
        if found is None:
            return None
        kind, body = found
        headers = Headers([("Content-Type", kind), ("Content-Length", str(len(body)))])
        headers["Cache-Control"] = "no-cache"
        if kind.startswith("text/html"):
            for name, value in PAGE_HEADERS:
                headers[name] = value
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, secured(headers), body)
