"""``python -m clients.cli realtime``: one conversation over the OpenAI Realtime-compatible ``/v1/realtime``.

Speaks the file with ``clients.realtime_client`` (24 kHz PCM16 appends at real-time pace, server VAD; a reply
it talks over is truncated), reports what was heard and answered on stderr, and saves the reply audio as played
(cut where the caller talked over it) to ``--out``.

Reason to change: what this mode sends, prints or saves.
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.audio.wav import write_wav
from clients.cli.options import (
    EXIT_CONNECT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TIMEOUT,
    Command,
    add_file_call,
    add_json,
    add_token,
    add_url,
    add_voice,
    read_audio,
)
from clients.realtime_client import DEFAULT_MODEL, RATE, RealtimeCaller, RealtimeFailed

LOCAL_KEY = "local"
"""The key sent when none is given: a server with auth off takes any non-empty key."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_url(parser, "v1/realtime")
    add_token(parser)
    add_file_call(parser)
    add_voice(parser)
    add_json(parser)
    parser.add_argument("--instructions", default=None, help="the session's instructions (the system prompt)")


async def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
    """One Realtime conversation with the file; returns the exit status."""
    pcm = read_audio(args.wav, RATE, stderr)
    if pcm is None:
        return EXIT_FAILED
    url = args.url if "?" in args.url else f"{args.url}?model={DEFAULT_MODEL}"
    headers = {"Authorization": f"Bearer {args.token or LOCAL_KEY}"}
    print(f"streaming {len(pcm) / 2 / RATE:.2f} s of {args.wav} to {url} (Realtime API)", file=stderr)
    try:
        async with connect(url, additional_headers=headers, max_size=None) as ws:
            caller = RealtimeCaller(ws, on_progress=lambda text: print(text, file=stderr, flush=True))
            try:
                await caller.begin(voice=args.voice, instructions=args.instructions)
            except RealtimeFailed as exc:
                print(f"error: the server refused the session settings: {exc}", file=stderr)
                return EXIT_FAILED
            await caller.stream(pcm, trailing_s=args.trailing_silence)
            settled = await caller.settle(args.timeout)
            await caller.close()
    except InvalidStatus as exc:
        print(f"error: the server refused the connection (HTTP {exc.response.status_code}); --token?", file=stderr)
        return EXIT_CONNECT
    except OSError as exc:
        print(f"error: cannot connect to {url}: {exc}. Is the server running (python -m agent)?", file=stderr)
        return EXIT_CONNECT
    for number, turn in enumerate(caller.turns, 1):
        v2v = turn.voice_to_voice_ms
        if v2v is not None:
            print(f"turn {number}: first reply audio {v2v:.0f} ms after the server's end of speech", file=stderr)
        if args.json:
            response = turn.response
            summary = {
                "turn": number,
                "transcript": turn.transcript,
                "reply": response.transcript if response else None,
                "status": response.status if response else None,
                "audio_seconds": round(response.audio_ms / 1000, 3) if response else 0.0,
                "voice_to_voice_ms": None if v2v is None else round(v2v, 1),
            }
            print(json.dumps(summary), file=stdout, flush=True)
    if args.out is not None:
        audio = caller.played()
        write_wav(args.out, audio, RATE)
        print(f"saved {len(audio) / 2 / RATE:.2f} s of reply audio to {args.out}", file=stderr)
    if not settled:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    return EXIT_OK


COMMAND = Command(
    name="realtime",
    help="act as an OpenAI Realtime API app on /v1/realtime (24 kHz PCM16, server VAD)",
    description=(
        "Speak an audio file as an OpenAI Realtime API app would, on /v1/realtime: 24 kHz PCM16 appends, "
        "server VAD, a reply talked over is truncated. --token is its API key (any non-empty key while the "
        "server's auth is off)."
    ),
    add_arguments=add_arguments,
    run=run,
    examples="""\
  python -m clients.cli realtime --wav question.wav --out reply.wav
  python -m clients.cli realtime --voice alice --instructions "Be brief." --wav q.wav --out reply.wav
""",
)
