"""The browser page in real headless Chromium with a fake microphone fed from generated speech.

Chromium is the Debian package (``/usr/bin/chromium``) driven by Playwright; nothing is downloaded. The fake
microphone plays a WAV of Piper speech followed by long silence (Chromium loops the file). The page must
show the transcript and the reply, play the reply audio (reporting ``playback.mark``s), and draw the
latency waterfall. A screenshot is saved to ``test-artifacts/browser.png``.
"""

from __future__ import annotations

import re
import wave
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.front_door.listener import RunningServer
from testing.speech import silence, speech_pcm16, wer
from tests.integration.chromium import chromium_page, flags, require_chromium

pytestmark = pytest.mark.models

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
playwright_api = require_chromium()


def _fake_mic(path: Path, text: str) -> Path:
    pcm = silence(800) + speech_pcm16(text) + silence(30000)  # the file loops: keep the repeat far away
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(pcm)
    return path


@pytest.fixture
async def page_for(tmp_path: Path) -> AsyncIterator[object]:
    wav = _fake_mic(tmp_path / "mic.wav", "What time is it?")
    async with chromium_page(flags(wav), viewport={"width": 1180, "height": 820}) as page:
        yield page


async def test_page_converses_plays_the_reply_and_shows_latencies(server: RunningServer, page_for: object) -> None:
    page = page_for
    assert isinstance(page, playwright_api.Page)
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: console.append(f"pageerror: {exc}"))
    page.on("response", lambda r: console.append(f"error: HTTP {r.status} {r.url}") if r.status >= 400 else None)
    await page.goto(server.http_url + "/")
    status = page.get_by_test_id("status")
    await playwright_api.expect(status).to_have_attribute("data-state", "idle")
    await playwright_api.expect(page.get_by_test_id("voice-select")).to_be_enabled()
    await page.get_by_test_id("start").click()
    await playwright_api.expect(page.get_by_test_id("stop")).to_be_enabled(timeout=10_000)

    transcript = page.get_by_test_id("transcript").last
    await playwright_api.expect(transcript).not_to_have_class("pending", timeout=30_000)
    assert wer("What time is it?", await transcript.inner_text()) <= 0.25, console
    reply = page.get_by_test_id("reply").last
    await playwright_api.expect(reply).not_to_have_text("…", timeout=20_000)
    assert "it" in (await reply.inner_text()).lower()
    metrics = page.get_by_test_id("metrics").last
    await playwright_api.expect(metrics).to_contain_text("Voice to voice", timeout=20_000)
    await page.wait_for_function("window.voiceAgent.playedMs > 800 && window.voiceAgent.marksSent >= 3", timeout=20_000)
    await playwright_api.expect(status).to_have_attribute("data-state", "listening", timeout=15_000)

    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "browser.png"), full_page=True)
    await page.get_by_test_id("stop").click()
    await playwright_api.expect(status).to_have_attribute("data-state", "idle")

    # Enrollment shows validation errors plainly (nothing is stored).
    result = page.locator("#enroll-result")
    await page.locator("#enroll").click()
    await playwright_api.expect(result).to_contain_text("Give the voice a name")
    await page.locator("#enroll-name").fill("browser-test")
    await playwright_api.expect(page.locator("#enroll-consent")).to_have_value(re.compile("^I, browser-test, "))
    junk = {"name": "junk.wav", "mimeType": "audio/wav", "buffer": b"this is not audio" * 20}
    await page.locator("#enroll-file").set_input_files(junk)
    await page.locator("#enroll").click()
    await playwright_api.expect(result).to_have_class("result bad", timeout=10_000)
    await playwright_api.expect(result).to_contain_text("(bad_audio)")
    errors = [line for line in console if line.startswith(("error", "pageerror"))]
    assert not [e for e in errors if "favicon" not in e and "404 (Not Found)" not in e], errors
