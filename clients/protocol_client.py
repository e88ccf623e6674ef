"""A client for wire protocol v1: stream PCM to the voice agent over one WebSocket and collect the turns.

Used by the CLI (``clients/cli/ws.py``), the latency benchmark (``bench/latency.py``) and tests::

    conversation = await converse("ws://127.0.0.1:8765/ws", pcm16k, 16000)
    for turn in conversation.turns:
        print(turn.transcript, turn.reply, turn.audio_seconds, turn.metrics)

Input goes out as 20 ms binary frames, paced against the monotonic clock (real time by default, because the
server's end-of-turn hangover is measured in audio time). After the input the client keeps sending silence,
still at real-time pace, until the conversation has *settled*: every turn announced by ``speech.stopped``
has its ``turn.metrics``, no speech is in progress, and enough trailing silence was sent. Then it sends
``session.end`` and waits for the server to close.

Client-side timing uses ``time.monotonic()``: for each turn, when the last non-silent input frame before its
``speech.stopped`` was sent, and when its first reply audio frame arrived. Framing and pacing live in
``clients/framing.py``, the handling of the server's messages in ``clients/session_state.py``, the per-turn
results in ``clients/conversation.py``. ``capabilities`` (e.g. ``clients.playback.CAPABILITIES``) are listed
in ``session.start``; none by default, so the server behaves as for a client that predates them. So is
``language`` (a code such as ``"de"``, or ``"auto"``): left out by default, so the server detects it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException

from clients.conversation import Conversation, Message
from clients.framing import FRAME_MS, VOICED_DBFS, FramePacer, frame_bytes, frame_dbfs, split_frames
from clients.session_state import EventCallback, SessionState
from clients.tool_command import ToolAnswers, ToolHandler

DEFAULT_URL = "ws://127.0.0.1:8765/ws"
INPUT_RATES: tuple[int, ...] = (8000, 16000, 24000, 48000)
"""Input sample rates the server accepts in ``session.start``."""
OUTPUT_RATES: tuple[int, ...] = (8000, 16000, 22050, 24000, 48000)
"""Values allowed for ``output_sample_rate`` in ``session.start``."""


class ClientError(Exception):
    """Base of the errors this client raises."""


class ConnectFailed(ClientError):
    """The WebSocket could not be opened (refused, unreachable, bad URL, HTTP error, timeout)."""


class SessionFailed(ClientError):
    """The server did not start the session (it sent ``error`` and/or closed before ``session.started``)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


# --- the connection ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Send:
    pcm: bytes
    utterance: bool = True


@dataclass(frozen=True, slots=True)
class _Settle:
    min_silence_s: float
    timeout_s: float
    playback: bool


_Step = _Send | _Settle
SPEECH_GRACE_S = 5.0
"""Stop waiting for a ``speech.stopped`` that never comes after this much silence beyond the minimum."""


async def _receive(ws: ClientConnection, state: SessionState) -> None:
    try:
        async for message in ws:
            now = time.monotonic()
            if isinstance(message, str):
                state.on_text(message, now)
            else:
                state.on_audio(message, now)
    except ConnectionClosed:
        pass
    finally:
        state.closed = True


async def _send_plan(ws: ClientConnection, state: SessionState, plan: Sequence[_Step], rate: int, speed: float) -> None:
    frame_s = FRAME_MS / 1000
    input_interval = 0.0 if math.isinf(speed) else frame_s / speed
    pacer = FramePacer(input_interval)
    silent_frame = bytes(frame_bytes(rate))
    for step in plan:
        if state.is_closed():
            return
        if isinstance(step, _Send):
            pacer.set_interval(input_interval)
            for frame in split_frames(step.pcm, rate):
                await pacer.wait()
                if state.is_closed():
                    return
                await ws.send(frame)
                state.conv.input_seconds += frame_s
                if frame_dbfs(frame) > VOICED_DBFS:
                    state.last_voice_sent_at = time.monotonic()
            if step.utterance:
                state.conv.segment_ends.append(time.monotonic())
            continue
        # Settle: silence at real-time pace until the replies are done (or the step times out).
        pacer.set_interval(frame_s)
        sent = 0.0
        while True:
            now = time.monotonic()
            if sent >= step.min_silence_s and state.settled(
                now, playback=step.playback, ignore_speaking=sent >= step.min_silence_s + SPEECH_GRACE_S
            ):
                break
            if sent >= step.timeout_s:
                state.conv.timed_out = True
                break
            await pacer.wait()
            if state.is_closed():
                return
            await ws.send(silent_frame)
            state.conv.input_seconds += frame_s
            sent += frame_s


async def _await_started(ws: ClientConnection, state: SessionState, timeout_s: float) -> None:
    try:
        async with asyncio.timeout(timeout_s):
            while not state.started:
                message = await ws.recv()
                if isinstance(message, str):
                    state.on_text(message, time.monotonic())
    except ConnectionClosed as exc:
        first = state.conv.errors[0] if state.conv.errors else None
        if first is not None:
            raise SessionFailed(str(first.get("message") or first.get("code")), first.get("code")) from exc
        raise SessionFailed(f"server closed the connection before session.started ({exc})") from exc
    except TimeoutError as exc:
        raise SessionFailed(f"no session.started within {timeout_s:g} s") from exc


def session_start(
    rate: int,
    *,
    voice: str | None = None,
    output_sample_rate: int | None = None,
    capabilities: Sequence[str] = (),
    language: str | None = None,
    tools: Sequence[Message] = (),
) -> Message:
    """The ``session.start`` message: optional fields only when given (a server then uses its defaults)."""
    start: Message = {"type": "session.start", "sample_rate": rate, "voice": voice}
    if output_sample_rate is not None:
        start["output_sample_rate"] = output_sample_rate
    if capabilities:
        start["capabilities"] = list(capabilities)
    if language is not None:
        start["language"] = language
    if tools:
        start["tools"] = list(tools)
    return start


def bearer(token: str | None) -> dict[str, str]:
    """The upgrade's ``Authorization`` header for an access token (none without one)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


async def _run(
    url: str,
    plan: Sequence[_Step],
    rate: int,
    *,
    token: str | None,
    voice: str | None,
    output_sample_rate: int | None,
    capabilities: Sequence[str],
    language: str | None,
    tools: Sequence[Message],
    on_tool_call: ToolHandler | None,
    speed: float,
    on_event: EventCallback | None,
    open_timeout_s: float,
    close_timeout_s: float,
) -> Conversation:
    conversation = Conversation(url=url, input_sample_rate=rate)
    if output_sample_rate is not None:
        conversation.output_sample_rate = output_sample_rate
    state = SessionState(conversation, on_event)
    try:
        ws = await connect(
            url,
            additional_headers=bearer(token),
            open_timeout=open_timeout_s,
            compression=None,
            close_timeout=close_timeout_s,
        )
    except InvalidURI as exc:
        raise ConnectFailed(f"invalid WebSocket URL {url!r}: {exc}") from exc
    except InvalidStatus as exc:
        response = exc.response
        body = (response.body or b"").decode("utf-8", "replace").strip()[:200]
        detail = f": {body}" if body else ""
        raise ConnectFailed(f"{url} refused the WebSocket with HTTP {response.status_code}{detail}") from exc
    except (OSError, TimeoutError, WebSocketException) as exc:
        raise ConnectFailed(f"cannot connect to {url}: {exc or type(exc).__name__}") from exc

    async with ws:
        answers = None if on_tool_call is None else ToolAnswers(on_tool_call, ws.send, on_event)
        state.on_event = on_event if answers is None else answers.on_message
        start = session_start(
            rate,
            voice=voice,
            output_sample_rate=output_sample_rate,
            capabilities=capabilities,
            language=language,
            tools=tools,
        )
        await ws.send(json.dumps(start))
        try:
            await _await_started(ws, state, open_timeout_s)
        finally:
            conversation.close_code = ws.close_code
            conversation.close_reason = ws.close_reason
        receiver = asyncio.create_task(_receive(ws, state))
        try:
            try:
                await _send_plan(ws, state, plan, rate, speed)
                if not state.is_closed():
                    await ws.send(json.dumps({"type": "session.end"}))
            except ConnectionClosed:
                pass
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(receiver), close_timeout_s)
        finally:
            if not receiver.done():
                receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await receiver
            if answers is not None:
                await answers.close()
    conversation.close_code = ws.close_code
    conversation.close_reason = ws.close_reason
    return conversation


async def converse(
    url: str,
    pcm: bytes,
    rate: int = 16000,
    *,
    token: str | None = None,
    voice: str | None = None,
    output_sample_rate: int | None = None,
    capabilities: Sequence[str] = (),
    language: str | None = None,
    tools: Sequence[Message] = (),
    on_tool_call: ToolHandler | None = None,
    realtime: bool = True,
    speed: float = 1.0,
    trailing_silence_s: float = 1.0,
    timeout_s: float = 60.0,
    on_event: EventCallback | None = None,
    open_timeout_s: float = 10.0,
    close_timeout_s: float = 5.0,
) -> Conversation:
    """Stream ``pcm`` (PCM16LE mono at ``rate``) in one session and collect every turn.

    The input is paced at ``speed`` × real time (``realtime=False``: as fast as the socket takes it). Then
    silence is sent at real-time pace until every announced turn has ``turn.metrics``, no speech is in
    progress and at least ``trailing_silence_s`` of silence went out (keep it above the server's hangover),
    or until ``timeout_s`` of waiting (``Conversation.timed_out``). Then ``session.end``; the server's close
    is awaited for ``close_timeout_s``. ``on_event`` is called with each JSON message as it arrives.
    ``token``: an access token, sent as ``Authorization: Bearer`` on the upgrade (servers with auth on).
    ``capabilities``: listed in ``session.start``; with ``playback.pause`` a paused turn's audio is cut back to
    the paused position and the resumed audio continues it (``TurnResult.pauses``). ``language``: the call's
    language for ``session.start`` (``"de"``, or ``"auto"``; ``None`` leaves it out: detected); each turn's
    ``TurnResult.language`` is the one the server transcribed it in. ``tools``: function declarations for
    ``session.start``; ``on_tool_call`` answers each ``tool.call`` (``clients.tool_command.ToolCommand``), aside
    while the session goes on, and its ``tool.result`` is sent and given to ``on_event`` too. Without it, calls
    are left unanswered (the server times them out).

    Raises ``ConnectFailed`` if the WebSocket cannot be opened and ``SessionFailed`` if the server never
    sends ``session.started``. A session the server ends early is returned, not raised.
    """
    plan: list[_Step] = [_Send(pcm), _Settle(trailing_silence_s, timeout_s, playback=False)]
    return await _run(
        url,
        plan,
        rate,
        token=token,
        voice=voice,
        output_sample_rate=output_sample_rate,
        capabilities=capabilities,
        language=language,
        tools=tools,
        on_tool_call=on_tool_call,
        speed=speed if realtime else math.inf,
        on_event=on_event,
        open_timeout_s=open_timeout_s,
        close_timeout_s=close_timeout_s,
    )


async def converse_utterances(
    url: str,
    utterances: Sequence[bytes],
    rate: int = 16000,
    *,
    token: str | None = None,
    voice: str | None = None,
    output_sample_rate: int | None = None,
    capabilities: Sequence[str] = (),
    language: str | None = None,
    tools: Sequence[Message] = (),
    on_tool_call: ToolHandler | None = None,
    lead_silence_s: float = 0.5,
    gap_s: float = 1.5,
    wait_for_replies: bool = True,
    wait_for_playback: bool = False,
    speed: float = 1.0,
    turn_timeout_s: float = 60.0,
    on_event: EventCallback | None = None,
    open_timeout_s: float = 10.0,
    close_timeout_s: float = 5.0,
) -> Conversation:
    """Speak several utterances in one session, each followed by at least ``gap_s`` of silence.

    With ``wait_for_replies`` (the default) the caller takes turns: after each gap it keeps sending silence
    until every announced turn has its ``turn.metrics`` and no speech is in progress, so the next utterance
    never supersedes a reply. ``wait_for_playback`` also waits until the reply audio would have finished
    playing (a simulated player that starts each chunk when it arrives), like a polite human caller.
    Without ``wait_for_replies`` the gaps are exactly ``gap_s`` and only the final wait is for the turns.
    Each wait gives up after ``turn_timeout_s`` (``Conversation.timed_out``) and the next utterance starts.
    Utterances are paced at ``speed`` × real time; waits are always real time. ``capabilities``, ``language``,
    ``tools``, ``on_tool_call`` and what it raises, as ``converse``.
    """
    plan: list[_Step] = [_Send(bytes(2 * int(rate * lead_silence_s)), utterance=False)]
    for utterance in utterances:
        plan.append(_Send(utterance))
        if wait_for_replies:
            plan.append(_Settle(gap_s, turn_timeout_s, playback=wait_for_playback))
        else:
            plan.append(_Send(bytes(2 * int(rate * gap_s)), utterance=False))
    if not wait_for_replies:
        plan.append(_Settle(0.0, turn_timeout_s, playback=wait_for_playback))
    return await _run(
        url,
        plan,
        rate,
        token=token,
        voice=voice,
        output_sample_rate=output_sample_rate,
        capabilities=capabilities,
        language=language,
        tools=tools,
        on_tool_call=on_tool_call,
        speed=speed,
        on_event=on_event,
        open_timeout_s=open_timeout_s,
        close_timeout_s=close_timeout_s,
    )
