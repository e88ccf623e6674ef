"""Command-line client: speak an audio file to the voice agent and save its spoken replies.

    python -m clients.cli --wav question.wav --out reply.wav
    python -m clients.cli --url ws://10.0.0.5:8765/ws --wav q.flac --voice alice --json > turns.jsonl
    python -m clients.cli --language de --wav frage.wav --out antwort.wav   # a German call (default: auto)
    python -m clients.cli --twilio --url wss://agent.example.com/twilio --wav q.wav --out reply.wav
    python -m clients.cli --telnyx --encoding PCMA --wav q.wav --out reply.wav     # ws://127.0.0.1:8765/telnyx
    python -m clients.cli --vonage --signature-secret "$SECRET" --wav q.wav --out reply.wav  # /vonage, 16 kHz
    python -m clients.cli --audiosocket --host 127.0.0.1 --port 9092 --wav q.wav --out reply.wav
    python -m clients.cli --realtime --voice alice --instructions "Be brief." --wav q.wav --out reply.wav
    python -m clients.cli --mic            # talk live (needs the optional extra `mic`: sounddevice)
    python -m clients.cli --token "$(python -m agent tokens mint --scope call)" --wav q.wav  # auth on

With ``--twilio`` the client plays a phone call as Twilio Media Streams would (μ-law 8 kHz ``media``,
``mark`` echoes as the reply "plays", ``clear`` honoured) against ``/twilio``; with ``--auth-token`` it
signs the handshake (``X-Twilio-Signature``) for ``--public-url``. ``--telnyx`` plays Telnyx media streaming
on ``/telnyx`` (``--encoding`` PCMU, PCMA or L16; ``--auth-token`` is then the ``stream_auth_token``), and
``--vonage`` a Vonage Voice API WebSocket on ``/vonage`` (binary L16 at ``--phone-rate``; ``--signature-secret``
signs the handshake's JWT, ``--authorization`` sends a custom value). With ``--audiosocket`` it plays the call
as Asterisk's ``AudioSocket()`` would (the call's UUID, then signed linear 8 kHz over TCP) against the server's
``AGENT_AUDIOSOCKET__PORT`` at ``--host``/``--port``. ``--realtime`` is an OpenAI Realtime API app on
``/v1/realtime`` (24 kHz PCM16 appends, server VAD; it truncates a reply it talks over, and ``--token`` is its
API key: any non-empty key while the server's auth is off). ``--mic`` streams the default microphone
to ``/ws`` and plays the replies on the default speaker, with barge-in. ``--token`` (or ``AGENT_TOKEN``)
is sent as ``Authorization: Bearer`` on the upgrade, for a server with auth on (never in the URL).

The file (WAV, FLAC or OGG; any rate, channels or sample format) is converted to PCM16 mono at ``--rate`` and
streamed in 20 ms frames at real-time pace, then silence follows until every reply has finished. The session
asks for ``playback.pause``: a reply the server pauses (the caller spoke over it) is cut back to where it was
paused and continued by the resumed audio, so ``--out`` holds the replies as they would be heard.
``--language`` (``/ws`` and ``--mic``) gives the call's language as ``session.start``'s ``language``: a code
of ``agent.languages.LANGUAGES`` (``de``; ``de-DE`` is taken as ``de``) or ``auto`` (the server detects it);
each transcript is printed with the language it was transcribed in. Progress goes to stderr; ``--json``
writes one JSON object per turn to stdout. The protocol logic lives in
``clients.protocol_client`` (``converse``), which the benchmark and tests call directly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from websockets.exceptions import InvalidStatus

from agent.audio.resample import resample
from agent.audio.wav import load_pcm16, write_wav
from agent.errors import AudioFormatError
from agent.languages import AUTO, LANGUAGES, NATIVE, parse_language
from clients import audiosocket_client, mic, phone_cli, realtime_cli
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

examples:
  python -m clients.cli --wav question.wav --out reply.wav
  python -m clients.cli --twilio --wav question.wav --out reply.wav
  python -m clients.cli --telnyx --encoding L16 --phone-rate 16000 --wav question.wav --out reply.wav
  python -m clients.cli --vonage --wav question.wav --out reply.wav
  python -m clients.cli --audiosocket --port 9092 --wav question.wav --out reply.wav  # AGENT_AUDIOSOCKET__PORT=9092
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
        "--audiosocket",
        action="store_true",
        help="act as Asterisk's AudioSocket() (TCP, signed linear 8 kHz) on --host/--port instead of /ws",
    )
    parser.add_argument("--host", default="127.0.0.1", help="--audiosocket: the server's address (default: 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=int,
        default=9092,
        help="--audiosocket: the server's AGENT_AUDIOSOCKET__PORT (default: 9092)",
    )
    parser.add_argument(
        "--call-id",
        type=uuid.UUID,
        default=None,
        metavar="UUID",
        help="--audiosocket: the call's UUID, as a dialplan would give it (default: a random one)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("AGENT_TOKEN") or None,
        help="access token for a server with auth on, sent as 'Authorization: Bearer' "
        "(default: $AGENT_TOKEN; mint one with python -m agent tokens mint --scope call)",
    )
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="act as an OpenAI Realtime API app on /v1/realtime (24 kHz PCM16, server VAD) instead of protocol v1",
    )
    parser.add_argument(
        "--instructions", default=None, help="--realtime: the session's instructions (the system prompt)"
    )
    parser.add_argument(
        "--telnyx",
        action="store_true",
        help="act as Telnyx media streaming on /telnyx (--encoding, default PCMU 8 kHz) instead of protocol v1",
    )
    parser.add_argument(
        "--vonage",
        action="store_true",
        help="act as a Vonage Voice API WebSocket on /vonage (binary L16, --phone-rate) instead of protocol v1",
    )
    parser.add_argument(
        "--encoding",
        choices=("PCMU", "PCMA", "L16"),
        default="PCMU",
        help="--telnyx: the stream's codec (PCMU and PCMA are 8 kHz; L16 takes --phone-rate) (default: PCMU)",
    )
    parser.add_argument(
        "--phone-rate",
        type=int,
        choices=(8000, 16000),
        default=None,
        help="--vonage and --telnyx --encoding L16: the call's sample rate (default: 16000)",
    )
    parser.add_argument(
        "--auth-token",
        default=None,
        help="--twilio: sign the handshake with this Twilio auth token; --telnyx: the stream_auth_token to present",
    )
    parser.add_argument(
        "--signature-secret",
        default=None,
        help="--vonage: send Authorization: Bearer <JWT> signed with this Vonage signature secret",
    )
    parser.add_argument(
        "--authorization", default=None, help="--vonage: send this Authorization value verbatim (custom authorization)"
    )
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
        "--language",
        type=_language,
        default=None,
        metavar="CODE|auto",
        help=f"the call's language, one of {', '.join(LANGUAGES)} (a tag such as de-DE is taken as de), or "
        f"'{AUTO}' to let the server detect it from the caller's speech (default: {AUTO}); /ws and --mic only",
    )
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


def _language(text: str) -> str:
    """``--language``: a code of ``LANGUAGES`` (normalised: ``de-DE`` -> ``de``) or ``auto``."""
    try:
        code = parse_language(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if code is None and text.strip().lower() != AUTO:
        raise argparse.ArgumentTypeError(f"language must be '{AUTO}' or one of {', '.join(LANGUAGES)}, got {text!r}")
    return AUTO if code is None else code


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``sys.argv[1:]`` by default); exits 2 with usage on bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.wav is None and not args.mic:
        parser.error("--wav is required (or --mic to talk live)")
    paths = ("realtime", "twilio", "telnyx", "vonage", "audiosocket", "mic")
    gateways = [name for name in paths if getattr(args, name)]
    if len(gateways) > 1:
        choices = ", ".join(f"--{name}" for name in paths)
        parser.error(f"choose one of {choices} (got {', '.join(gateways)})")
    if args.instructions is not None and not args.realtime:
        parser.error("--instructions is for --realtime")
    if args.language is not None and gateways not in ([], ["mic"]):
        parser.error("--language is for protocol v1 (/ws and --mic); the other paths take no language")
    if args.audiosocket and args.voice:
        parser.error("--voice: AudioSocket has no way to ask for a voice; the server uses AGENT_AUDIOSOCKET__VOICE")
    if args.audiosocket and not 0 < args.port < 65536:
        parser.error(f"--port must be 1-65535, not {args.port}")
    if args.phone_rate is not None and not (args.vonage or (args.telnyx and args.encoding == "L16")):
        parser.error("--phone-rate is for --vonage and --telnyx --encoding L16 (G.711 is 8 kHz)")
    if (args.signature_secret or args.authorization) and not args.vonage:
        parser.error("--signature-secret and --authorization are for --vonage")
    if args.signature_secret and args.authorization:
        parser.error("--signature-secret and --authorization both set the Authorization header: choose one")
    gateway = "v1/realtime" if args.realtime else phone_cli.provider(args)
    if gateway is not None and args.url == DEFAULT_URL:
        args.url = DEFAULT_URL.removesuffix("/ws") + "/" + gateway
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
            language = msg.get("language")
            self._say(
                f"session {msg.get('session_id')}: input {msg.get('input_sample_rate')} Hz, "
                f"output {msg.get('output_sample_rate')} Hz, voice {msg.get('voice')}"
                + (f", language {language}" if language is not None else "")
            )
        elif kind == "speech.started":
            self._say(f"  speech started at {float(msg.get('audio_ms') or 0) / 1000:.2f} s")
        elif kind == "speech.stopped":
            self._say(f"  speech stopped at {float(msg.get('audio_ms') or 0) / 1000:.2f} s (turn {turn})")
        elif kind == "transcript":
            text = msg.get("text") or ""
            said = f" [{language_label(msg.get('language'))}]" if msg.get("language") else ""
            self._say(f"turn {turn} heard{said}: {text!r}" if text else f"turn {turn} heard nothing{said}")
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


def language_label(code: object) -> str:
    """How a transcript's ``language`` is printed: ``de (Deutsch)``; a code this client does not know, as is."""
    text = str(code)
    return f"{text} ({NATIVE[text]})" if text in NATIVE else text


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
        return await mic.live(args.url, args.voice, token=args.token, language=args.language)
    if args.realtime:
        return await realtime_cli.run_realtime(args, stdout=stdout, stderr=stderr)
    if phone_cli.provider(args) is not None:
        return await phone_cli.run_gateway(args, stderr=stderr)
    if args.audiosocket:
        return await run_audiosocket(args, stderr=stderr)
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
            language=args.language,
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
    """``--twilio``: one simulated phone call; the reply audio (8 kHz) goes to ``--out`` (``clients.phone_cli``)."""
    return await phone_cli.run_gateway(args, stderr=stderr)


async def run_audiosocket(args: argparse.Namespace, *, stderr: TextIO = sys.stderr) -> int:
    """``--audiosocket``: one simulated Asterisk call; the reply audio (8 kHz) goes to ``--out``."""
    try:
        pcm = load_pcm16(args.wav, audiosocket_client.RATE)
    except (AudioFormatError, OSError) as exc:
        print(f"cannot read {args.wav}: {exc}", file=stderr)
        return EXIT_FAILED
    where = f"{args.host}:{args.port}"
    print(
        f"calling {where} with {len(pcm) / 2 / audiosocket_client.RATE:.2f} s of {args.wav} (AudioSocket)", file=stderr
    )
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
        write_wav(args.out, bytes(got.audio), audiosocket_client.RATE)
        print(f"saved {got.audio_ms / 1000:.2f} s of reply audio to {args.out}", file=stderr)
    if not got.audio_times:
        print("the server hung up without a word (busy, refused, or no voice: see its log)", file=stderr)
        return EXIT_FAILED
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
