"""The browser page's side of ``playback.pause`` (and of a transcript that ``continues`` an earlier turn), in real
headless Chromium against a scripted fake agent.

The fake agent serves the page's files and speaks protocol v1 on ``/ws`` (no models): it checks that the page
asks for the ``playback.pause`` capability, sends reply audio, pauses it, and then resumes it (more frames and
``audio.end`` again) or clears it (barge-in). It records the page's ``playback.mark``s: after a pause they must
count on from the pause's ``played_ms``, what was buffered before the pause must never play, and the resumed
audio must play to its end. Chromium is the Debian package (``/usr/bin/chromium``) driven by Playwright, with
the fake microphone (a beep; the fake agent ignores the caller's audio).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest
from websockets.asyncio.server import ServerConnection, serve

from testing.waits import until
from tests.integration.chromium import chromium_page, flags, require_chromium, serve_page

RATE = 24000
FRAME_MS = 40
WAIT_MS = 30_000  # a hang guard, not a bound: every wait is for an event
playwright_api = require_chromium()


def _audio(ms: int) -> list[bytes]:
    """``ms`` of a quiet tone as 40 ms frames (the last shorter), as the server sends reply audio."""
    samples = [round(3000 * ((i % 48) / 24 - 1)) for i in range(ms * RATE // 1000)]
    pcm = b"".join(s.to_bytes(2, "little", signed=True) for s in samples)
    step = FRAME_MS * RATE // 1000 * 2
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]


@dataclass
class FakeAgent:
    """Serves the page; on ``/ws`` answers ``voices.list`` and ``session.start`` and records the marks."""

    url: str = ""
    start: dict[str, object] = field(default_factory=dict)
    call: ServerConnection | None = None
    marks: list[tuple[int, int]] = field(default_factory=list)
    news: asyncio.Event = field(default_factory=asyncio.Event)

    async def handler(self, ws: ServerConnection) -> None:
        async for message in ws:
            if isinstance(message, bytes):
                continue  # the caller's microphone
            msg = json.loads(message)
            if msg["type"] == "voices.list":
                await ws.send(json.dumps({"type": "voices", "voices": []}))
            elif msg["type"] == "session.start":
                self.start, self.call = msg, ws
                await ws.send(json.dumps({
                    "type": "session.started", "session_id": "s1", "protocol": 1, "input_sample_rate": 16000,
                    "output_sample_rate": RATE, "voice": "joe", "capabilities": msg.get("capabilities", []),
                }))  # fmt: skip
            elif msg["type"] == "playback.mark":
                self.marks.append((msg["turn"], msg["played_ms"]))
            elif msg["type"] == "session.end":
                await ws.close(1000)
            self.news.set()

    async def until(self, what: Callable[[], bool]) -> None:
        def marks() -> str:
            return f"the page's marks (turn, played_ms), now {self.marks}"

        await until(what, WAIT_MS / 1000, marks, changed=self.news)

    async def send(self, *messages: dict[str, object] | list[bytes]) -> None:
        assert self.call is not None
        for message in messages:
            if isinstance(message, list):
                for frame in message:
                    await self.call.send(frame)
            else:
                await self.call.send(json.dumps(message))

    def of(self, turn: int) -> list[int]:
        return [ms for t, ms in self.marks if t == turn]


@pytest.fixture
async def agent() -> AsyncIterator[FakeAgent]:
    fake = FakeAgent()
    async with serve(fake.handler, "127.0.0.1", 0, process_request=serve_page) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"http://127.0.0.1:{port}"
        yield fake


@pytest.fixture
async def page() -> AsyncIterator[object]:
    async with chromium_page(flags()) as page:
        yield page


def _turn(turn: int, text: str) -> list[dict[str, object]]:
    return [
        {"type": "speech.stopped", "turn": turn, "audio_ms": 1000 * turn},
        {"type": "transcript", "turn": turn, "text": "hello"},
        {"type": "reply.done", "turn": turn, "text": text},
        {"type": "audio.start", "turn": turn, "sample_rate": RATE},
    ]


def _runs(marks: list[int]) -> list[list[int]]:
    """The marks split where they go back (at a pause): each run must be non-decreasing."""
    runs: list[list[int]] = [[]]
    for ms in marks:
        if runs[-1] and ms < runs[-1][-1]:
            runs.append([])
        runs[-1].append(ms)
    return runs


async def test_page_pauses_resumes_and_clears_a_reply(agent: FakeAgent, page: object) -> None:
    assert isinstance(page, playwright_api.Page)
    expect = playwright_api.expect
    console: list[str] = []
    page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: console.append(f"pageerror: {exc}"))
    await page.goto(agent.url + "/")
    status = page.get_by_test_id("status")
    await expect(status).to_have_attribute("data-state", "idle")
    await page.get_by_test_id("start").click()
    await expect(status).to_have_attribute("data-state", "listening", timeout=WAIT_MS)
    assert agent.start["capabilities"] == ["playback.pause"]

    # Turn 1: 3 s of reply (all of it buffered at once), paused at 200 ms once over 600 ms has played, then
    # resumed with 500 ms more: the turn must end at 700 ms, none of the dropped audio played.
    await agent.send(*_turn(1, "A long reply."), _audio(3000), {"type": "audio.end", "turn": 1})
    await agent.until(lambda: max(agent.of(1), default=0) >= 600)
    await agent.send({"type": "playback.pause", "turn": 1, "played_ms": 200})
    first = page.locator("li.turn", has_text="A long reply.")
    await expect(first.get_by_test_id("paused")).to_be_visible(timeout=WAIT_MS)
    await expect(status).to_have_attribute("data-state", "paused")
    await agent.send(_audio(500), {"type": "audio.end", "turn": 1})
    await agent.until(lambda: agent.of(1)[-1:] == [700] and _runs(agent.of(1))[-1][0] < 600)
    await expect(status).to_have_attribute("data-state", "listening", timeout=WAIT_MS)
    await expect(first.get_by_test_id("paused")).to_have_count(0)
    before, after = _runs(agent.of(1))
    assert max(before) >= 600
    assert all(200 <= ms <= 700 for ms in after), agent.of(1)
    await agent.send({"type": "turn.metrics", "turn": 1, "interrupted": False, "heard_ms": None})

    # Turn 2: the turn had played to its end here before the server's pause (its marks lagged): the resume
    # still plays, from the pause's position.
    await agent.send(*_turn(2, "Short."), _audio(300), {"type": "audio.end", "turn": 2})
    await agent.until(lambda: agent.of(2)[-1:] == [300])
    await agent.send({"type": "playback.pause", "turn": 2, "played_ms": 100})
    second = page.locator("li.turn", has_text="Short.")
    await expect(second.get_by_test_id("paused")).to_be_visible(timeout=WAIT_MS)
    await agent.send(_audio(200), {"type": "audio.end", "turn": 2})
    await agent.until(lambda: agent.of(2).count(300) == 2)
    resumed = agent.of(2)[agent.of(2).index(300) + 1 :]
    assert all(100 <= ms <= 300 for ms in resumed), agent.of(2)
    await expect(second.get_by_test_id("paused")).to_have_count(0)
    await agent.send({"type": "turn.metrics", "turn": 2, "interrupted": False, "heard_ms": None})

    # Turn 3: paused, then the caller's speech turns out to be a barge-in: cleared, tagged "interrupted".
    await agent.send(*_turn(3, "Another long reply."), _audio(3000))
    await agent.until(lambda: max(agent.of(3), default=0) >= 300)
    await agent.send({"type": "playback.pause", "turn": 3, "played_ms": 250})
    third = page.locator("li.turn", has_text="Another long reply.")
    await expect(third.get_by_test_id("paused")).to_be_visible(timeout=WAIT_MS)
    await agent.send({"type": "playback.clear", "turn": 3})
    await expect(third).to_contain_text("interrupted", timeout=WAIT_MS)
    await expect(third.get_by_test_id("paused")).to_have_count(0)
    await expect(status).to_have_attribute("data-state", "hearing")
    await agent.send({"type": "turn.metrics", "turn": 3, "interrupted": True, "heard_ms": 250})
    await expect(third.get_by_test_id("metrics")).to_contain_text("interrupted", timeout=WAIT_MS)

    # Turns 4 and 5: the caller had only paused. Turn 4's reply is cut, and turn 5's transcript holds both
    # halves ("continues": 4): turn 4 is put away, turn 5 shows the whole sentence.
    await agent.send(
        {"type": "speech.stopped", "turn": 4, "audio_ms": 4000},
        {"type": "transcript", "turn": 4, "text": "I need eggs, milk."},
        {"type": "reply.delta", "turn": 4, "text": "Sure, I"},
        {"type": "playback.clear", "turn": 4},
        {"type": "turn.metrics", "turn": 4, "interrupted": True, "heard_ms": 0},
    )
    fourth = page.locator("li.turn", has_text="I need eggs, milk.")
    await expect(fourth).to_be_visible(timeout=WAIT_MS)
    await agent.send(
        {"type": "speech.stopped", "turn": 5, "audio_ms": 5000},
        {"type": "transcript", "turn": 5, "text": "I need eggs, milk, bread and butter.", "continues": 4},
        {"type": "reply.done", "turn": 5, "text": "Added all four."},
    )
    fifth = page.locator("li.turn", has_text="Added all four.")
    await expect(fifth.get_by_test_id("transcript")).to_have_text("I need eggs, milk, bread and butter.")
    await expect(fourth).to_be_hidden(timeout=WAIT_MS)
    await expect(page.locator("li.turn", has_text="eggs").filter(visible=True)).to_have_count(1)  # one sentence

    await page.get_by_test_id("stop").click()
    await expect(status).to_have_attribute("data-state", "idle")
    errors = [line for line in console if line.startswith(("error", "pageerror"))]
    assert not [e for e in errors if "favicon" not in e], errors
