"""``python -m clients.cli ws``: speak an audio file to ``/ws`` (protocol v1) and save the spoken replies.

The file is converted to PCM16 mono at ``--rate`` and streamed in 20 ms frames at real-time pace, then silence
follows until every reply has finished. The session asks for ``playback.pause``: a reply the server pauses (the
caller spoke over it) is cut back to where it was paused and continued by the resumed audio, so ``--out`` holds
the replies as they would be heard. ``--tools`` declares functions in ``session.start`` and ``--tool-command``
answers the server's ``tool.call``s (``clients.tool_command``). The protocol logic lives in
``clients.protocol_client`` (``converse``), which the benchmarks and tests call directly.

Reason to change: what this mode prints or saves, or the options of protocol v1 it exposes.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any, TextIO

from websockets.exceptions import InvalidStatus

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.audio.wav import write_wav
from agent.languages import NATIVE
from clients.cli.options import (
    EXIT_CONNECT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TIMEOUT,
    Command,
    Fail,
    add_file_call,
    add_json,
    add_language,
    add_token,
    add_url,
    add_voice,
    positive_float,
    read_audio,
)
from clients.conversation import Conversation, Message
from clients.playback import CAPABILITIES
from clients.protocol_client import INPUT_RATES, OUTPUT_RATES, ConnectFailed, SessionFailed, converse
from clients.tool_command import ToolCommand, load_tools

_STAGES = (
    ("endpoint", "endpoint_ms"),
    ("asr", "asr_ms"),
    ("llm", "llm_first_text_ms"),
    ("tts", "tts_first_audio_ms"),
    ("voice-to-voice", "voice_to_voice_ms"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_url(parser, "ws")
    add_token(parser)
    add_file_call(parser)
    add_voice(parser)
    add_language(parser)
    add_json(parser)
    parser.add_argument(
        "--rate", type=int, default=16000, choices=INPUT_RATES, help="sample rate to stream at (default: 16000)"
    )
    parser.add_argument(
        "--output-rate",
        type=int,
        default=None,
        choices=OUTPUT_RATES,
        help="sample rate of the reply audio (default: the server's, normally 24000)",
    )
    parser.add_argument(
        "--tools",
        type=tools_file,
        default=None,
        metavar="FILE",
        help="a JSON file of functions the model may call, sent in session.start: a list of "
        '{"name", "description", "parameters"} (OpenAI\'s {"type": "function", ...} shapes too), or an object '
        "with such a 'tools' list; e.g. docs/examples/tools.json. The server sends a tool.call when the model "
        "calls one; without --tool-command the calls are printed and left unanswered (the server times them out)",
    )
    parser.add_argument(
        "--tool-command",
        type=tool_command,
        default=None,
        metavar="CMD",
        help="answer each tool.call by running CMD (split like a shell command line, not run by a shell) with "
        'the call as JSON on its stdin, {"name", "call_id", "arguments"}: its stdout is sent as the '
        "tool.result's output when it exits 0, else its stderr as the error; e.g. "
        "'python docs/examples/tool_command.py'. Needs --tools",
    )
    parser.add_argument(
        "--tool-timeout",
        type=positive_float,
        default=8.0,
        metavar="S",
        help="seconds --tool-command may run before it is killed and the call answered with an error; keep it "
        "under the server's own wait for a result, 10 s by default (default: 8)",
    )


def tools_file(text: str) -> list[dict[str, Any]]:
    """``--tools``: the function declarations in the file (``clients.tool_command.load_tools``)."""
    try:
        return load_tools(Path(text))
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tool_command(text: str) -> str:
    """``--tool-command``: a command line with at least a program."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into words: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("the command is empty")
    return text


def check(args: argparse.Namespace, fail: Fail) -> None:
    if args.tool_command is not None and args.tools is None:
        fail("--tool-command answers the tools declared with --tools: give --tools FILE too")


def _fmt_ms(value: Any) -> str:
    return "-" if value is None else f"{float(value):.0f} ms"


def language_label(code: object) -> str:
    """How a transcript's ``language`` is printed: ``de (Deutsch)``; a code this client does not know, as is."""
    text = str(code)
    return f"{text} ({NATIVE[text]})" if text in NATIVE else text


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
        elif kind == "tool.call":
            arguments = msg.get("arguments")
            shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            self._say(f"turn {turn} calls {msg.get('name')}({shown}) [{msg.get('call_id')}]")
        elif kind == "tool.result":
            said = f"error: {msg.get('error')}" if "error" in msg else f"{msg.get('output')}"
            self._say(f"  tool result [{msg.get('call_id')}]: {said[:200]}")
        elif kind == "turn.metrics":
            stages = " | ".join(f"{name} {_fmt_ms(msg.get(key))}" for name, key in _STAGES)
            tools = msg.get("tools") or []
            calls = "".join(
                f" | tool {t.get('name')} {_fmt_ms(t.get('ms'))} {t.get('outcome')}"
                for t in tools
                if isinstance(t, dict)
            )
            flag = " (interrupted)" if msg.get("interrupted") else ""
            self._say(f"turn {turn} metrics: {stages}{calls}{flag}")
        elif kind == "error":
            where = f" (turn {turn})" if turn is not None else ""
            self._say(f"server error [{msg.get('code')}]{where}: {msg.get('message')}")
        elif kind == "session.ended":
            self._say(f"session ended: {msg.get('reason')}")


def reply_audio(conversation: Conversation) -> bytes:
    """All reply audio at the session's output rate (a turn at another rate is resampled)."""
    rate = conversation.output_sample_rate
    parts: list[bytes] = []
    for turn in conversation.turns:
        data = bytes(turn.audio)
        if data and turn.sample_rate != rate:
            data = float_to_pcm16(resample(pcm16_to_float(data), turn.sample_rate, rate))
        parts.append(data)
    return b"".join(parts)


async def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
    """One conversation on ``/ws`` with the file; returns the exit status."""
    pcm = read_audio(args.wav, args.rate, stderr)
    if pcm is None:
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
            tools=args.tools or (),
            on_tool_call=None if args.tool_command is None else ToolCommand(args.tool_command, args.tool_timeout),
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


COMMAND = Command(
    name="ws",
    help="speak an audio file over protocol v1 on /ws (the browser's protocol) and save the replies",
    description=(
        "Speak an audio file to the voice agent over its WebSocket (protocol v1), print what it heard and "
        "answered, and save its spoken replies. Each transcript is printed with the language it was "
        "transcribed in; progress goes to stderr, --json writes one JSON object per turn to stdout. With --tools "
        "and --tool-command the model may call your functions, and a script of yours answers them."
    ),
    add_arguments=add_arguments,
    run=run,
    check=check,
    examples="""\
  python -m clients.cli ws --wav question.wav --out reply.wav
  python -m clients.cli ws --url ws://10.0.0.5:8765/ws --wav q.flac --voice alice --json > turns.jsonl
  python -m clients.cli ws --language de --wav frage.wav --out antwort.wav   # a German call (default: auto)
  python -m clients.cli ws --token "$(python -m agent tokens mint --scope call)" --wav q.wav  # auth on
  # the model may call the functions of tools.json, and the script answers each call:
  python -m clients.cli ws --wav q.wav --tools docs/examples/tools.json \\
      --tool-command "python docs/examples/tool_command.py"
""",
)
