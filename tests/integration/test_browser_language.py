"""The browser page's language picker, in real headless Chromium: the caller's choice goes out as ``language`` in
``session.start``, is kept for the next visit, and each transcript shows the language it was transcribed in.

Two servers: the real one with the bundled models and the multilingual Whisper base (German picked, a German
caller made with espeak-ng: the server must take ``"de"`` and transcribe in it), and a scripted fake agent (no
models) for the Automatic choice, whose transcripts come back in the languages the fake says were detected. What
the page sends is read from Chromium's own WebSocket instrumentation, so it is what left the browser. Chromium is
the Debian package (``/usr/bin/chromium``) driven by Playwright, with a fake microphone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import wave
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from agent.audio.pcm import float_to_pcm16
from agent.front_door.listener import RunningServer, running_server
from agent.languages import LANGUAGES, NATIVE
from agent.runtime.components import Components
from agent.wiring import build_stt
from testing.echo_audio import espeak
from testing.speech import silence
from testing.waits import within
from tests.integration.chromium import chromium_page, flags, require_chromium, serve_page
from tests.integration.conftest import local_settings

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WAIT_MS = 60_000  # a hang guard, not a bound: every wait is for an event
playwright_api = require_chromium()
expect = playwright_api.expect


class Frames:
    """The JSON text frames of every WebSocket the page opens: ``sent`` by the page, ``received`` by it."""

    def __init__(self, page: Any) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        ws.on("framesent", lambda payload: self.sent.append(json.loads(payload)) if isinstance(payload, str) else None)
        ws.on("framereceived", lambda p: self.received.append(json.loads(p)) if isinstance(p, str) else None)

    def of(self, kind: str, frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in frames if m.get("type") == kind]


def _console(page: Any) -> list[str]:
    lines: list[str] = []
    page.on("console", lambda msg: lines.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: lines.append(f"pageerror: {exc}"))
    return lines


def _errors(console: list[str]) -> list[str]:
    return [e for e in console if e.startswith(("error", "pageerror")) and "favicon" not in e]


# --- the real server: German ----------------------------------------------------------------------------------


@pytest.fixture
async def mic_page(tmp_path: Path) -> AsyncIterator[Any]:
    german = float_to_pcm16(
        espeak("Ich möchte gern wissen, wie spät es ist und ob der Zug pünktlich ist.", "de", 150, 16000)
    )
    pcm = silence(800) + german + silence(30000)  # the file loops: keep the repeat away
    wav = tmp_path / "mic.wav"
    with wave.open(str(wav), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(pcm)
    async with chromium_page(flags(wav), viewport={"width": 1180, "height": 820}) as page:
        yield page


@pytest.fixture(scope="module")
def multilingual(components: Components) -> Iterator[Components]:
    """The bundled models, with Whisper base (installed by make) hearing the ten languages."""
    stt = build_stt(local_settings(asr={"model": "base"}))
    yield dataclasses.replace(components, stt=stt)
    close = getattr(stt, "close", None)
    if close is not None:
        close()


@pytest.fixture
async def server(multilingual: Components) -> AsyncIterator[RunningServer]:
    async with running_server(local_settings(asr={"model": "base"}), lambda: multilingual) as running:
        await running.wait_ready()
        yield running


@pytest.mark.models
async def test_german_is_sent_kept_and_shown_with_the_transcript(server: RunningServer, mic_page: Any) -> None:
    page = mic_page
    console = _console(page)
    frames = Frames(page)
    await page.goto(server.http_url + "/")
    picker = page.get_by_test_id("language-select")
    await expect(picker).to_have_value("auto")  # nothing chosen yet: the server detects the language
    await picker.select_option("de")
    await page.reload()  # the choice is kept for the next visit
    await expect(picker).to_have_value("de")

    await page.get_by_test_id("start").click()
    await expect(page.get_by_test_id("stop")).to_be_enabled(timeout=WAIT_MS)
    await expect(picker).to_be_disabled()  # fixed for the call
    (start,) = frames.of("session.start", frames.sent)
    assert start["language"] == "de", start
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "listening", timeout=WAIT_MS)
    (started,) = frames.of("session.started", frames.received)
    assert started.get("language") == "de", f"the server did not take the language: {started}"
    await expect(page.locator("#hint")).to_contain_text("Language: Deutsch")

    # The newest turn shown: a turn the caller only paused in is hidden once the next one continues it (its
    # transcript never comes on its own), and turns are listed newest first.
    shown = page.locator("li.turn:not([hidden])").first
    transcript = shown.get_by_test_id("transcript")
    try:
        await expect(transcript).not_to_have_class("pending", timeout=WAIT_MS)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nthe page received: {[m.get('type') for m in frames.received]}") from None
    heard = frames.of("transcript", frames.received)
    assert heard and all(m.get("language") == "de" for m in heard), heard
    tag = shown.get_by_test_id("transcript-language")
    await expect(tag).to_have_text("DE")
    await expect(tag).to_have_attribute("title", "Deutsch")
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "browser-language.png"), full_page=True)
    await page.get_by_test_id("stop").click()
    await expect(picker).to_be_enabled()
    assert not _errors(console), console


# --- a scripted fake agent: Automatic --------------------------------------------------------------------------


@dataclass
class FakeAgent:
    """Serves the page; on ``/ws`` answers ``voices.list`` and ``session.start`` (echoing its ``language``)."""

    url: str = ""
    call: ServerConnection | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def handler(self, ws: ServerConnection) -> None:
        async for message in ws:
            if isinstance(message, bytes):
                continue  # the caller's microphone
            msg = json.loads(message)
            if msg["type"] == "voices.list":
                await ws.send(json.dumps({"type": "voices", "voices": []}))
            elif msg["type"] == "session.start":
                self.call = ws
                await ws.send(json.dumps({
                    "type": "session.started", "session_id": "s1", "protocol": 1, "input_sample_rate": 16000,
                    "output_sample_rate": 24000, "voice": "joe", "capabilities": [],
                    "language": msg.get("language", "auto"),
                }))  # fmt: skip
                self.started.set()
            elif msg["type"] == "session.end":
                await ws.close(1000)

    async def send(self, *messages: dict[str, object]) -> None:
        await within(self.started.wait(), WAIT_MS / 1000, "the page's call to start")
        assert self.call is not None
        for message in messages:
            await self.call.send(json.dumps(message))


@pytest.fixture
async def agent() -> AsyncIterator[FakeAgent]:
    fake = FakeAgent()
    async with serve(fake.handler, "127.0.0.1", 0, process_request=serve_page) as server:
        fake.url = f"http://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}"
        yield fake


@pytest.fixture
async def page() -> AsyncIterator[Any]:
    async with chromium_page(flags()) as page:
        yield page


def _heard(turn: int, text: str, language: str) -> list[dict[str, object]]:
    return [
        {"type": "speech.stopped", "turn": turn, "audio_ms": 1000 * turn},
        {"type": "transcript", "turn": turn, "text": text, "language": language},
        {"type": "reply.done", "turn": turn, "text": f"Reply {turn}."},
    ]


async def test_automatic_shows_the_language_detected_for_each_turn(agent: FakeAgent, page: Any) -> None:
    console = _console(page)
    frames = Frames(page)
    await page.goto(agent.url + "/")
    picker = page.get_by_test_id("language-select")
    options = await picker.locator("option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
    assert options == [["auto", "Automatic"], *([code, NATIVE[code]] for code in LANGUAGES)]
    await expect(picker).to_have_value("auto")

    await page.get_by_test_id("start").click()
    await expect(page.get_by_test_id("status")).to_have_attribute("data-state", "listening", timeout=WAIT_MS)
    (start,) = frames.of("session.start", frames.sent)
    assert start["language"] == "auto"
    await expect(page.locator("#hint")).to_contain_text("Language: automatic")

    await agent.send(*_heard(1, "Wie spät ist es?", "de"), *_heard(2, "And in London?", "en"))
    first = page.locator("li.turn", has_text="Reply 1.").get_by_test_id("transcript-language")
    second = page.locator("li.turn", has_text="Reply 2.").get_by_test_id("transcript-language")
    await expect(first).to_have_text("DE", timeout=WAIT_MS)
    await expect(first).to_have_attribute("title", "Deutsch (detected)")
    await expect(first).to_have_attribute("lang", "de")
    await expect(second).to_have_text("EN", timeout=WAIT_MS)

    # A server that does not say (older than the languages): no tag, the transcript as before.
    await agent.send({"type": "speech.stopped", "turn": 3, "audio_ms": 3000},
                     {"type": "transcript", "turn": 3, "text": "Thanks."},
                     {"type": "reply.done", "turn": 3, "text": "Reply 3."})  # fmt: skip
    third = page.locator("li.turn", has_text="Reply 3.")
    await expect(third.get_by_test_id("transcript")).to_have_text("Thanks.", timeout=WAIT_MS)
    await expect(third.get_by_test_id("transcript-language")).to_have_count(0)
    await page.get_by_test_id("stop").click()
    await expect(picker).to_be_enabled()
    await picker.select_option("ja")
    await page.reload()
    await expect(picker).to_have_value("ja")  # kept for the next visit
    assert not _errors(console), console
