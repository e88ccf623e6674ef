"""Command-line client: speak an audio file to the voice agent and save its spoken replies.

    python -m clients.cli --wav question.wav --out reply.wav
    python -m clients.cli --url ws://10.0.0.5:8765/ws --wav q.flac --voice alice --json > turns.jsonl
    python -m clients.cli --twilio --url wss://agent.example.com/twilio --wav q.wav --out reply.wav
    python -m clients.cli --mic            # talk live (needs the optional extra `mic`: sounddevice)
    python -m clients.cli --token "$(python -m agent tokens mint --scope call)" --wav q.wav  # auth on

With ``--twilio`` the client plays a phone call as Twilio Media Streams would (μ-law 8 kHz ``media``,
``mark`` echoes as the reply "plays", ``clear`` honoured) against ``/twilio``; with ``--auth-token`` it
signs the handshake (``X-Twilio-Signature``) for ``--public-url``. ``--mic`` streams the default microphone
to ``/ws`` and plays the replies on the default speaker, with barge-in. ``--token`` (or ``AGENT_TOKEN``)
is sent as ``Authorization: Bearer`` on the upgrade, for a server with auth on (never in the URL).

The file (WAV, FLAC or OGG; any rate, channels or sample format) is converted to PCM16 mono at ``--rate`` and
streamed in 20 ms frames at real-time pace, then silence follows until every reply has finished. The session
asks for ``playback.pause``: a reply the server pauses (the caller spoke over it) is cut back to where it was
paused and continued by the resumed audio, so ``--out`` holds the replies as they would be heard. Progress
goes to stderr; ``--json`` writes one JSON object per turn to stdout. The protocol logic lives in
``clients.protocol_client`` (``converse``), which the benchmark and tests call directly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from websockets.exceptions import InvalidStatus

from agent.audio.resample import resample
from agent.audio.wav import load_pcm16, write_wav
from agent.errors import AudioFormatError
from agent.transport import twilio
from clients import mic, twilio_client
from clients.conversation import Conversation, Message
from clients.playback import CAPABILITIES
from clients.protocol_client import DEFAULT_URL, INPUT_RATES, OUTPUT_RATES, ConnectFailed, SessionFailed, converse

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONNECT = 2
EXIT_TIMEOUT = 3

_EPILOG = f"""\
exit status:
  {EXIT_OK}  every turn finished
  {EXIT_FAILED}  bad input file, or the server refused the session (its error is printed)
  {EXIT_CONNECT}  cannot connect to the server (or bad command-line arguments)
  {EXIT_TIMEOUT}  --timeout ran out before the replies finished (what arrived is still saved)

example:
  python -m clients.cli --wav question.wav --out reply.wav
"""

_STAGES = (
    ("endpoint", "endpoint_ms"),
    ("asr", "asr_ms"),
    ("llm", "llm_first_text_ms"),
    ("tts", "tts_first_audio_ms"),
    ("voice-to-voice", "voice_to_voice_ms"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m clients.cli",
        description=(
            "Speak an audio file to the voice agent over its WebSocket (protocol v1), print what it heard "
            "and answered, and save its spoken replies."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", default=DEFAULT_URL, help=f"server WebSocket URL (default: {DEFAULT_URL})")
    parser.add_argument(
        "--twilio",
        action="store_true",
        help="act as a Twilio Media Streams caller on /twilio (μ-law 8 kHz) instead of protocol v1 on /ws",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("AGENT_TOKEN") or None,
        help="access token for a server with auth on, sent as 'Authorization: Bearer' "
        "(default: $AGENT_TOKEN; mint one with python -m agent tokens mint --scope call)",
    )
    parser.add_argument("--auth-token", default=None, help="--twilio: sign the handshake with this Twilio auth token")
    parser.add_argument(
        "--public-url", default=None, help="--twilio: the public URL to sign (default: --url), as the server sees it"
    )
    parser.add_argument(
        "--mic", action="store_true", help="talk live from the default microphone to the default speaker (/ws)"
    )
    parser.add_argument(
        "--wav",
        type=Path,
        metavar="IN",
        help="audio to speak: WAV, FLAC or OGG, any sample rate, channels or sample format",
    )
    parser.add_argument("--voice", default=None, help="enrolled voice to answer in (default: the server's)")
    parser.add_argument(
        "--out", type=Path, default=None, metavar="OUT.wav", help="save all reply audio, concatenated, here"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per turn to stdout (progress stays on stderr)",
    )
    parser.add_argument(
        "--rate",
        type=int,
        default=16000,
        choices=INPUT_RATES,
        help="sample rate to stream at (default: 16000)",
    )
    parser.add_argument(
        "--output-rate",
        type=int,
        default=None,
        choices=OUTPUT_RATES,
        help="sample rate of the reply audio (default: the server's, normally 24000)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=60.0,
        metavar="S",
        help="seconds to wait for the replies after the file has been sent (default: 60)",
    )
    parser.add_argument(
        "--trailing-silence",
        type=_positive_float,
        default=1.0,
        metavar="S",
        help="minimum silence sent after the file; keep it above the server's hangover (default: 1.0)",
    )
    return parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``sys.argv[1:]`` by default); exits 2 with usage on bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.wav is None and not args.mic:
        parser.error("--wav is required (or --mic to talk live)")
    if args.twilio and args.url == DEFAULT_URL:
        args.url = DEFAULT_URL.removesuffix("/ws") + "/twilio"
    return args


def _fmt_ms(value: Any) -> str:
    return "-" if value is None else f"{float(value):.0f} ms"


class Progress:
    """Prints server events to ``stream`` as they arrive (the ``on_event`` callback of ``converse``)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def _say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def __call__(self, msg: Message) -> None:
        kind = msg.get("type")
        turn = msg.get("turn")
        if kind == "session.started":
            self._say(
                f"session {msg.get('session_id')}: input {msg.get('input_sample_rate')} Hz, "
                f"output {msg.get('output_sample_rate')} Hz, voice {msg.get('voice')}"
            )
        elif kind == "speech.started":
            self._say(f"  speech started at {float(msg.get('audio_ms') or 0) / 1000:.2f} s")
        elif kind == "speech.stopped":
            self._say(f"  speech stopped at {float(msg.get('audio_ms') or 0) / 1000:.2f} s (turn {turn})")
        elif kind == "transcript":
            text = msg.get("text") or ""
            self._say(f"turn {turn} heard: {text!r}" if text else f"turn {turn} heard nothing")
        elif kind == "reply.done":
            self._say(f"turn {turn} reply: {msg.get('text')!r}")
        elif kind == "playback.pause":
            self._say(f"  turn {turn} paused at {float(msg.get('played_ms') or 0) / 1000:.2f} s of its reply")
        elif kind == "playback.clear":
            self._say(f"  turn {turn} interrupted")
        elif kind == "turn.metrics":
            stages = " | ".join(f"{name} {_fmt_ms(msg.get(key))}" for name, key in _STAGES)
            flag = " (interrupted)" if msg.get("interrupted") else ""
            self._say(f"turn {turn} metrics: {stages}{flag}")
        elif kind == "error":
            where = f" (turn {turn})" if turn is not None else ""
            self._say(f"server error [{msg.get('code')}]{where}: {msg.get('message')}")
        elif kind == "session.ended":
            self._say(f"session ended: {msg.get('reason')}")


def reply_audio(conversation: Conversation) -> bytes:
    """All reply audio at the session's output rate (a turn at another rate is resampled)."""
    from agent.audio.pcm import float_to_pcm16, pcm16_to_float

    rate = conversation.output_sample_rate
    parts: list[bytes] = []
    for turn in conversation.turns:
        data = bytes(turn.audio)
        if data and turn.sample_rate != rate:
            data = float_to_pcm16(resample(pcm16_to_float(data), turn.sample_rate, rate))
        parts.append(data)
    return b"".join(parts)


async def run(args: argparse.Namespace, *, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    """Do what the parsed command line asks; returns the exit status."""
    if args.mic:
        return await mic.live(args.url, args.voice, token=args.token)
    if args.twilio:
        return await run_twilio(args, stderr=stderr)
    try:
        pcm = load_pcm16(args.wav, args.rate)
    except (AudioFormatError, OSError) as exc:
        print(f"cannot read {args.wav}: {exc}", file=stderr)
        return EXIT_FAILED
    print(f"streaming {len(pcm) / 2 / args.rate:.2f} s of {args.wav} to {args.url}", file=stderr)
    try:
        conversation = await converse(
            args.url,
            pcm,
            args.rate,
            token=args.token,
            voice=args.voice,
            output_sample_rate=args.output_rate,
            capabilities=CAPABILITIES,
            trailing_silence_s=args.trailing_silence,
            timeout_s=args.timeout,
            on_event=Progress(stderr),
        )
    except ConnectFailed as exc:
        hint = "" if isinstance(exc.__cause__, InvalidStatus) else " Is the server running (python -m agent)?"
        print(f"error: {exc}.{hint}", file=stderr)
        return EXIT_CONNECT
    except SessionFailed as exc:
        code = f" [{exc.code}]" if exc.code else ""
        print(f"error: the server did not start the session{code}: {exc}", file=stderr)
        return EXIT_FAILED

    for turn in conversation.turns:
        v2v = turn.client_voice_to_voice_ms
        if v2v is not None:
            print(
                f"turn {turn.turn}: {turn.audio_seconds:.2f} s of audio, client voice-to-voice {v2v:.0f} ms",
                file=stderr,
            )
        if args.json:
            print(json.dumps(turn.summary()), file=stdout, flush=True)
    if args.out is not None:
        audio = reply_audio(conversation)
        write_wav(args.out, audio, conversation.output_sample_rate)
        seconds = len(audio) / 2 / conversation.output_sample_rate
        print(f"saved {seconds:.2f} s of reply audio to {args.out}", file=stderr)
    if conversation.timed_out:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    return EXIT_OK


async def run_twilio(args: argparse.Namespace, *, stderr: TextIO = sys.stderr) -> int:
    """``--twilio``: one simulated phone call; the reply audio (8 kHz) goes to ``--out``."""
    try:
        pcm = load_pcm16(args.wav, twilio.RATE)
    except (AudioFormatError, OSError) as exc:
        print(f"cannot read {args.wav}: {exc}", file=stderr)
        return EXIT_FAILED
    headers = {}
    if args.auth_token:
        headers["X-Twilio-Signature"] = twilio.signature(args.auth_token, args.public_url or args.url)
    print(f"calling {args.url} with {len(pcm) / 2 / twilio.RATE:.2f} s of {args.wav} (μ-law 8 kHz)", file=stderr)
    try:
        caller, settled = await twilio_client.call(
            args.url,
            pcm,
            voice=args.voice,
            headers=headers,
            token=args.token,
            settle_s=max(2.0, args.trailing_silence),
            timeout_s=args.timeout,
            on_progress=lambda text: print(text, file=stderr, flush=True),
        )
    except InvalidStatus as exc:
        print(f"error: the server refused the call: HTTP {exc.response.status_code}", file=stderr)
        return EXIT_CONNECT
    except OSError as exc:
        print(f"error: cannot connect to {args.url}: {exc}. Is the server running (python -m agent)?", file=stderr)
        return EXIT_CONNECT
    got = caller.received
    print(f"call ended: {len(got.media_times) * 20 / 1000:.2f} s of reply audio, {len(got.clears)} clears", file=stderr)
    if args.out is not None:
        write_wav(args.out, bytes(got.audio), twilio.RATE)
        print(f"saved {len(got.audio) / 2 / twilio.RATE:.2f} s of reply audio to {args.out}", file=stderr)
    if not settled:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
