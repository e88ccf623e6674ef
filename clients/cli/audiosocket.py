"""``python -m clients.cli audiosocket``: one simulated call as Asterisk's ``AudioSocket()`` would place it: the
call's UUID, then signed linear 8 kHz over TCP, against the server's ``AGENT_AUDIOSOCKET__PORT``.

Reason to change: what this mode sends, prints or saves.
"""

from __future__ import annotations

import argparse
import uuid
from typing import TextIO

from agent.audio.wav import write_wav
from clients import audiosocket_client
from clients.cli.options import (
    EXIT_CONNECT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TIMEOUT,
    Command,
    Fail,
    add_file_call,
    read_audio,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="the server's address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=9092, help="the server's AGENT_AUDIOSOCKET__PORT (default: 9092)")
    parser.add_argument(
        "--call-id",
        type=uuid.UUID,
        default=None,
        metavar="UUID",
        help="the call's UUID, as a dialplan would give it (default: a random one)",
    )
    add_file_call(parser)


def check(args: argparse.Namespace, fail: Fail) -> None:
    if not 0 < args.port < 65536:
        fail(f"--port must be 1-65535, not {args.port}")


async def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
    """One simulated Asterisk call; the reply audio (8 kHz) goes to ``--out``. Returns the exit status."""
    rate = audiosocket_client.RATE
    pcm = read_audio(args.wav, rate, stderr)
    if pcm is None:
        return EXIT_FAILED
    where = f"{args.host}:{args.port}"
    print(f"calling {where} with {len(pcm) / 2 / rate:.2f} s of {args.wav} (AudioSocket)", file=stderr)
    try:
        caller, settled = await audiosocket_client.call(
            args.host,
            args.port,
            pcm,
            call_id=args.call_id,
            settle_s=max(2.0, args.trailing_silence),
            timeout_s=args.timeout,
            on_progress=lambda text: print(text, file=stderr, flush=True),
        )
    except OSError as exc:
        print(f"error: cannot connect to {where}: {exc}. Is AGENT_AUDIOSOCKET__PORT set on the server?", file=stderr)
        return EXIT_CONNECT
    got = caller.received
    print(f"call {caller.call} ended: {got.audio_ms / 1000:.2f} s of reply audio", file=stderr)
    if args.out is not None:
        write_wav(args.out, bytes(got.audio), rate)
        print(f"saved {got.audio_ms / 1000:.2f} s of reply audio to {args.out}", file=stderr)
    if not got.audio_times:
        print("the server hung up without a word (busy, refused, or no voice: see its log)", file=stderr)
        return EXIT_FAILED
    if not settled:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    return EXIT_OK


COMMAND = Command(
    name="audiosocket",
    help="act as Asterisk's AudioSocket() (TCP, signed linear 8 kHz) on --host/--port",
    description=(
        "Play a call as Asterisk's AudioSocket() would: the call's UUID, then signed linear 8 kHz over TCP, "
        "against the server's AGENT_AUDIOSOCKET__PORT at --host/--port. AudioSocket has no way to ask for a "
        "voice: the server answers in AGENT_AUDIOSOCKET__VOICE. The reply audio (8 kHz) goes to --out."
    ),
    add_arguments=add_arguments,
    run=run,
    check=check,
    examples="""\
  python -m clients.cli audiosocket --port 9092 --wav question.wav --out reply.wav  # AGENT_AUDIOSOCKET__PORT=9092
  python -m clients.cli audiosocket --host 10.0.0.7 --call-id 40325ec2-5efd-4bd3-805f-53576e581d13 --wav q.wav
""",
)
