"""``python -m agent voices ...``: enrol, list, show and remove cloned voices in the configured store.

Progress goes to stderr, results to stdout. Exit codes: 0 done, 1 refused or failed (the reason is
printed), 2 bad command line (argparse).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from agent.audio.reference import MAX_UPLOAD_BYTES
from agent.config import Settings
from agent.enrollment import DEFAULT_LANGUAGE, LANGUAGES, Enrollment, EnrollmentRequest
from agent.enrollment import record_to_dict as _as_dict
from agent.errors import AgentError, EnrollmentRejected, UnknownVoice
from agent.ports import SpeechToText, VoiceRecord


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``voices`` command and its subcommands to ``python -m agent``'s subparsers."""
    voices = sub.add_parser(
        "voices",
        help="manage enrolled (cloned) voices",
        description="Enrol, list, show and remove cloned voices in the voice store "
        "(AGENT_VOICES__BACKEND / AGENT_VOICES__DIR, see config/local.env).",
    )
    voices.add_argument("--env-file", type=Path, help="read settings from this env file as well")
    commands = voices.add_subparsers(dest="voices_command", metavar="ACTION", required=True)
    add = commands.add_parser(
        "add",
        help="enrol a voice from a recording",
        description="Enrol a voice from a recording of one speaker: WAV, FLAC, OGG, MP3 or M4A/AAC "
        f"(detected from the content), at most {MAX_UPLOAD_BYTES // 2**20} MB, 3-20 s of speech works best "
        "(1-30 s accepted). The audio is converted to 24 kHz mono, trimmed and loudness-normalised.",
    )
    add.add_argument("name", help="voice name: 1-64 letters, digits, '-' or '_' (not case-sensitive)")
    add.add_argument("--audio", type=Path, required=True, help="the reference recording")
    add.add_argument(
        "--transcript",
        help="exactly what is said in the recording (recommended); without it the server's ASR transcribes it",
    )
    add.add_argument(
        "--language", default=DEFAULT_LANGUAGE, help=f"one of {', '.join(LANGUAGES)} (default {DEFAULT_LANGUAGE})"
    )
    add.add_argument(
        "--consent",
        required=True,
        help="consent statement: who the speaker is and that they agree to this voice being cloned",
    )
    for command, text in (("list", "list enrolled voices"), ("show", "show one voice"), ("remove", "remove a voice")):
        parser = commands.add_parser(command, help=text, description=text[0].upper() + text[1:] + ".")
        if command != "list":
            parser.add_argument("name", help="the voice name")
        if command != "remove":
            parser.add_argument("--json", action="store_true", help="print JSON")
    return voices


def _progress(line: str) -> None:
    print(f"... {line}", file=sys.stderr, flush=True)


def _describe(record: VoiceRecord) -> str:
    return "\n".join(
        [
            f"name:        {record.name}",
            f"id:          {record.voice_id}",
            f"language:    {record.language}",
            f"duration:    {record.duration_s:.2f} s",
            f"created:     {record.created_at}",
            f"sha256:      {record.sha256}",
            f"transcript:  {record.transcript}",
            f"consent:     {record.consent}",
        ]
    )


def _read_upload(path: Path) -> bytes | None:
    if not path.is_file():
        print(f"error: no such file: {path}", file=sys.stderr)
        return None
    if path.stat().st_size > MAX_UPLOAD_BYTES:
        print(f"error [too_large]: {path} is over {MAX_UPLOAD_BYTES:,} bytes", file=sys.stderr)
        return None
    return path.read_bytes()


async def _add(args: argparse.Namespace, settings: Settings) -> int:
    from agent.wiring import build_stt, build_voice_store

    audio = await asyncio.to_thread(_read_upload, args.audio)
    if audio is None:
        return 1
    store = build_voice_store(settings)
    stt: SpeechToText | None = None
    if not (args.transcript or "").strip():
        _progress("loading the speech recogniser (no --transcript given)")
        stt = await asyncio.to_thread(build_stt, settings)
    request = EnrollmentRequest(args.name, audio, args.consent, args.transcript, args.language)
    result = await Enrollment(store, stt).enroll(request, _progress)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"enrolled voice {result.record.name!r} ({result.record.duration_s:.1f} s)")
    print(_describe(result.record))
    return 0


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    from agent.wiring import build_voice_store

    command = args.voices_command
    if command == "add":
        return await _add(args, settings)
    store = build_voice_store(settings)
    if command == "list":
        records = await store.list()
        if args.json:
            print(json.dumps([_as_dict(r) for r in records], indent=2))
        elif not records:
            print("no voices enrolled", file=sys.stderr)
        else:
            print(f"{'NAME':<24} {'LANGUAGE':<10} {'SECONDS':>7}  CREATED")
            for r in records:
                print(f"{r.name:<24} {r.language:<10} {r.duration_s:>7.1f}  {r.created_at}")
        return 0
    if command == "show":
        record = (await store.get(args.name)).record
        print(json.dumps(_as_dict(record), indent=2) if args.json else _describe(record))
        return 0
    if command == "remove":
        await store.remove(args.name)
        print(f"removed voice {args.name!r}")
        return 0
    raise AssertionError(command)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a parsed ``voices`` command; returns the process exit code."""
    try:
        return asyncio.run(_run(args, settings))
    except EnrollmentRejected as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
    except UnknownVoice as exc:
        print(f"error [unknown_voice]: no voice named {exc.name!r}", file=sys.stderr)
    except AgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 1
