"""``python -m agent voices ...``: enrol, list, show, remove and check cloned voices in the configured store.

Every command works in one tenant (``--tenant``, default ``default``: the tenant of every caller when auth is
off). The CLI acts as the operator (principal ``cli``, all scopes). Progress goes to stderr, results to
stdout. Exit codes: 0 done, 1 refused or failed (the reason is printed), 2 bad command line (argparse).

``add`` keeps to the tenant's voice quota (``AGENT_VOICES__MAX_VOICES_PER_TENANT``) unless given
``--ignore-quota``: the operator decides, but should not fill a tenant past what its callers are allowed by
mistake. The enrollment rate does not apply: it guards the server against its callers, and the operator,
running on the machine, is not one of them.

``check`` (``agent.cli.voices_check``) speaks a few sentences in a voice with the configured cloning backend and
scores their speaker similarity to the voice's reference audio.

Reason to change: the operator's commands for the voice store.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path

from agent.audio.reference import MAX_UPLOAD_BYTES
from agent.cli import voices_check
from agent.config import Settings
from agent.errors import AgentError, EnrollmentRejected, UnknownVoice
from agent.ports import SpeechToText, VoiceRecord
from agent.security.auth import CLI, DEFAULT_TENANT, MAX_TENANT, Principal, is_valid_tenant
from agent.voices.enrollment import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    MAX_SPEAKER,
    Enrollment,
    EnrollmentLimits,
    EnrollmentRequest,
)
from agent.voices.records import record_to_dict as _as_dict


def _tenant(value: str) -> str:
    if not is_valid_tenant(value):
        raise argparse.ArgumentTypeError(
            f"a tenant is 1-{MAX_TENANT} lower-case letters, digits, '-' or '_', starting with a letter or digit"
        )
    return value


def _add_tenant(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tenant",
        type=_tenant,
        default=DEFAULT_TENANT,
        help=f"the voices' tenant (default {DEFAULT_TENANT!r}: the tenant of every caller when auth is off)",
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``voices`` command and its subcommands to ``python -m agent``'s subparsers."""
    voices = sub.add_parser(
        "voices",
        help="manage enrolled (cloned) voices",
        description="Enrol, list, show, remove and check cloned voices in the voice store "
        "(AGENT_VOICES__BACKEND / AGENT_VOICES__DIR, see config/local.env). A voice belongs to one tenant; "
        "every command works in --tenant (default 'default').",
    )
    voices.add_argument("--env-file", type=Path, help="read settings from this env file as well")
    commands = voices.add_subparsers(dest="voices_command", metavar="ACTION", required=True)
    add = commands.add_parser(
        "add",
        help="enrol a voice from a recording",
        description="Enrol a voice from a recording of one speaker: WAV, FLAC, OGG, MP3 or M4A/AAC "
        f"(detected from the content), at most {MAX_UPLOAD_BYTES // 2**20} MB, 3-20 s of speech works best "
        "(1-30 s accepted). The audio is converted to 24 kHz mono, trimmed and loudness-normalised. "
        "The consent statement, the speaker, the time, the SHA-256 of the normalised audio and the tenant are "
        "stored as the voice's consent record; synthesis refuses a voice without one.",
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
    add.add_argument("--speaker", default="", help=f"who consented: the speaker's name (at most {MAX_SPEAKER} chars)")
    add.add_argument(
        "--ignore-quota",
        action="store_true",
        help="enrol even if the tenant already has AGENT_VOICES__MAX_VOICES_PER_TENANT voices "
        "(the enrollment rate never applies to this command)",
    )
    _add_tenant(add)
    texts = (
        ("list", "list the tenant's enrolled voices"),
        ("show", "show one voice and its consent record"),
        ("remove", "remove a voice: its audio, record, consent record and derived files (fixed phrases)"),
    )
    for command, text in texts:
        parser = commands.add_parser(command, help=text, description=text[0].upper() + text[1:] + ".")
        if command != "list":
            parser.add_argument("name", help="the voice name")
        _add_tenant(parser)
        if command != "remove":
            parser.add_argument("--json", action="store_true", help="print JSON (the stored form)")
    check = commands.add_parser(
        "check",
        help="score how much the voice backend still sounds like a voice (speaker similarity)",
        description=voices_check.DESCRIPTION,
    )
    voices_check.add_arguments(check)
    _add_tenant(check)
    return voices


def _progress(line: str) -> None:
    print(f"... {line}", file=sys.stderr, flush=True)


def _describe(record: VoiceRecord) -> str:
    consent = record.consent
    valid = "valid" if consent.covers(record.sha256, record.tenant) else "NOT VALID: synthesis refuses this voice"
    return "\n".join(
        [
            f"name:        {record.name}",
            f"tenant:      {record.tenant}",
            f"id:          {record.voice_id}",
            f"language:    {record.language}",
            f"duration:    {record.duration_s:.2f} s",
            f"created:     {record.created_at}",
            f"sha256:      {record.sha256}",
            f"transcript:  {record.transcript}",
            f"consent:     {valid}",
            f"  statement:     {consent.statement}",
            f"  speaker:       {consent.speaker or '(not stated)'}",
            f"  consented at:  {consent.consented_at}",
            f"  audio sha256:  {consent.audio_sha256}",
            f"  enrolled by:   {consent.enrolled_by}",
            f"  tenant:        {consent.tenant}",
        ]
    )


def _principal(args: argparse.Namespace) -> Principal:
    return dataclasses.replace(CLI, tenant=args.tenant)


def _read_upload(path: Path) -> bytes | None:
    if not path.is_file():
        print(f"error: no such file: {path}", file=sys.stderr)
        return None
    if path.stat().st_size > MAX_UPLOAD_BYTES:
        print(f"error [too_large]: {path} is over {MAX_UPLOAD_BYTES:,} bytes", file=sys.stderr)
        return None
    return path.read_bytes()


async def _add(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here, as in agent.__main__: the runtime and the adapters load only for the commands that use them.
    from agent.wiring import build_stt, build_voice_store

    audio = await asyncio.to_thread(_read_upload, args.audio)
    if audio is None:
        return 1
    store = build_voice_store(settings)
    stt: SpeechToText | None = None
    if not (args.transcript or "").strip():
        _progress("loading the speech recogniser (no --transcript given)")
        stt = await asyncio.to_thread(build_stt, settings)
    request = EnrollmentRequest(args.name, audio, args.consent, args.transcript, args.language, args.speaker)
    quota = 0 if args.ignore_quota else settings.voices.max_voices_per_tenant
    result = await Enrollment(store, stt, limits=EnrollmentLimits(max_voices=quota)).enroll(
        request, _principal(args), _progress
    )
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"enrolled voice {result.record.name!r} in tenant {args.tenant!r} ({result.record.duration_s:.1f} s)")
    print(_describe(result.record))
    return 0


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here, as in agent.__main__: the runtime and the adapters load only for the commands that use them.
    from agent.wiring import build_voice_store

    command = args.voices_command
    if command == "add":
        return await _add(args, settings)
    if command == "check":
        return await voices_check.run_check(args, settings, _progress)
    store = build_voice_store(settings)
    if command == "list":
        records = await store.list(args.tenant)
        if args.json:
            print(json.dumps([_as_dict(r) for r in records], indent=2))
        elif not records:
            print(f"no voices enrolled in tenant {args.tenant!r}", file=sys.stderr)
        else:
            print(f"{'NAME':<24} {'LANGUAGE':<10} {'SECONDS':>7}  CREATED")
            for r in records:
                print(f"{r.name:<24} {r.language:<10} {r.duration_s:>7.1f}  {r.created_at}")
        return 0
    if command == "show":
        record = (await store.get(args.tenant, args.name)).record
        print(json.dumps(_as_dict(record), indent=2) if args.json else _describe(record))
        return 0
    if command == "remove":
        await store.remove(args.tenant, args.name)
        print(f"removed voice {args.name!r} from tenant {args.tenant!r}: audio, records and derived files")
        return 0
    raise AssertionError(command)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a parsed ``voices`` command; returns the process exit code."""
    try:
        return asyncio.run(_run(args, settings))
    except EnrollmentRejected as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        if exc.code == "quota_exceeded":
            print("(add --ignore-quota to enrol past the quota anyway)", file=sys.stderr)
    except UnknownVoice as exc:
        tenant = getattr(args, "tenant", DEFAULT_TENANT)
        print(f"error [unknown_voice]: no voice named {exc.name!r} in tenant {tenant!r}", file=sys.stderr)
    except AgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 1
