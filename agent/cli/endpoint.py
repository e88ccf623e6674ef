"""``python -m agent endpoint deploy|status|warmup|delete``: manage the Qwen3-TTS SageMaker endpoint.

``deploy`` uses the SageMaker Python SDK's ``JumpStartModel`` (an optional extra: ``pip install .[deploy]``,
imported only here); ``--dry-run`` prints exactly what would be created and needs neither the SDK nor AWS
credentials. ``status`` and ``delete`` use the aiobotocore ``sagemaker`` client. ``warmup`` sends real
synthesis requests through the server's own adapter, retrying, until the endpoint answers (the first
requests after a deploy can take about 67 s while the model compiles).

Reason to change: how the Qwen3-TTS endpoint is deployed, inspected or removed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from agent.config import Settings
from agent.errors import AgentError

MODEL_ID = "huggingface-ttsvoiceclone-qwen3-tts-12hz-1-7b-base"
MODEL_VERSION = "1.0.1"
INSTANCE_TYPE = "ml.g6.4xlarge"
ENV = {"SM_VLLM_GPU_MEMORY_UTILIZATION": "0.45"}


def add_parser(sub: Any) -> None:
    """Register ``endpoint`` and its commands on an ``argparse`` sub-parser collection."""
    endpoint = sub.add_parser(
        "endpoint",
        help="deploy, inspect, warm up or delete the SageMaker text-to-speech endpoint",
        description="Manage the Qwen3-TTS voice-cloning endpoint named by AGENT_TTS__ENDPOINT_NAME "
        "(default qwen3-tts-voice-clone) in AGENT_TTS__REGION.",
    )
    commands = endpoint.add_subparsers(dest="endpoint_command", metavar="ACTION", required=True)
    deploy = commands.add_parser(
        "deploy",
        help="create the endpoint from SageMaker JumpStart",
        description=f"Deploy JumpStart model {MODEL_ID} {MODEL_VERSION} on {INSTANCE_TYPE} with "
        f"{ENV} (accepts the model's EULA). Needs `pip install .[deploy]` and an execution role.",
    )
    deploy.add_argument("--role-arn", help="SageMaker execution role ARN (default: the SDK's own lookup)")
    deploy.add_argument("--instance-type", default=INSTANCE_TYPE, help=f"default {INSTANCE_TYPE}")
    deploy.add_argument("--dry-run", action="store_true", help="print what would be created; create nothing")
    commands.add_parser("status", help="show the endpoint's status", description="DescribeEndpoint, summarised.")
    warmup = commands.add_parser(
        "warmup",
        help="send synthesis requests until the endpoint answers",
        description="Synthesize a short sentence in VOICE through the server's adapter, retrying, until it works.",
    )
    warmup.add_argument("--voice", help="an enrolled voice (default AGENT_TTS__DEFAULT_VOICE)")
    warmup.add_argument("--tenant", default="default", help="the voice's tenant (default: default)")
    warmup.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds (600)")
    delete = commands.add_parser(
        "delete", help="delete the endpoint and its configuration", description="DeleteEndpoint + config."
    )
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def deploy_plan(settings: Settings, instance_type: str, role_arn: str | None) -> dict[str, Any]:
    return {
        "model_id": MODEL_ID,
        "model_version": MODEL_VERSION,
        "instance_type": instance_type,
        "initial_instance_count": 1,
        "endpoint_name": settings.tts.endpoint_name,
        "region": settings.tts.region,
        "env": ENV,
        "accept_eula": True,
        "role": role_arn or "(the SDK's default execution role)",
    }


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one ``endpoint`` command; returns the process exit status."""
    command = args.endpoint_command
    if command == "deploy":
        return _deploy(args, settings)
    if command == "warmup":
        return asyncio.run(_warmup(args, settings))
    if command == "delete" and not args.yes:
        name = settings.tts.endpoint_name
        if input(f"delete endpoint {name!r} in {settings.tts.region}? [y/N] ").strip().lower() != "y":
            print("not deleted", file=sys.stderr)
            return 1
    return asyncio.run(_manage(command, args, settings))


def _deploy(args: argparse.Namespace, settings: Settings) -> int:
    plan = deploy_plan(settings, args.instance_type, args.role_arn)
    if args.dry_run:
        print(json.dumps(plan, indent=2))
        return 0
    try:
        from sagemaker.jumpstart.model import JumpStartModel  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        print("deploy needs the SageMaker Python SDK 2.x: pip install '.[deploy]'", file=sys.stderr)
        return 2
    kwargs: dict[str, Any] = {"model_id": MODEL_ID, "model_version": MODEL_VERSION, "env": ENV}
    if args.role_arn:
        kwargs["role"] = args.role_arn
    model = JumpStartModel(**kwargs)
    print(f"deploying {MODEL_ID} as {plan['endpoint_name']} (several minutes)...", file=sys.stderr)
    model.deploy(
        initial_instance_count=1,
        instance_type=args.instance_type,
        endpoint_name=plan["endpoint_name"],
        accept_eula=True,
    )
    print(f"endpoint {plan['endpoint_name']} is InService; next: python -m agent endpoint warmup", file=sys.stderr)
    return 0


async def _manage(command: str, args: argparse.Namespace, settings: Settings) -> int:
    from aiobotocore.session import get_session
    from botocore.exceptions import BotoCoreError, ClientError

    name = settings.tts.endpoint_name
    try:
        async with get_session().create_client("sagemaker", region_name=settings.tts.region) as client:
            if command == "status":
                described = await client.describe_endpoint(EndpointName=name)
                summary = {k: described.get(k) for k in ("EndpointName", "EndpointStatus", "FailureReason")}
                summary["CreationTime"] = str(described.get("CreationTime"))
                print(json.dumps(summary, indent=2))
                return 0
            described = await client.describe_endpoint(EndpointName=name)
            await client.delete_endpoint(EndpointName=name)
            await client.delete_endpoint_config(EndpointConfigName=described["EndpointConfigName"])
            print(f"deleted endpoint {name} and its configuration", file=sys.stderr)
            return 0
    except (ClientError, BotoCoreError) as exc:
        print(f"{command} failed: {exc}", file=sys.stderr)
        return 1


async def _warmup(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here, as in agent.__main__: the runtime and the adapters load only for the commands that use them.
    from agent.wiring import build_tts, build_voice_store

    # One attempt at a time, retried here every 10 s; the circuit breaker never opens (waiting is the point).
    tts_settings = settings.tts.model_copy(
        update={"read_timeout_s": 90.0, "deadline_s": 120.0, "max_attempts": 1, "breaker_failures": 1_000_000}
    )
    tts = build_tts(settings.model_copy(update={"tts": tts_settings}), build_voice_store(settings))
    started = time.monotonic()
    attempt = 0
    try:
        voice = await tts.resolve_voice(args.voice, args.tenant)
        while True:
            attempt += 1
            print(f"attempt {attempt} ({time.monotonic() - started:.0f} s)...", file=sys.stderr, flush=True)
            try:
                audio = b"".join([chunk async for chunk in tts.synthesize("Hello, this is a warm-up.", voice)])
                print(f"ready: {len(audio) / 2 / tts.sample_rate:.2f} s of audio", file=sys.stderr)
                return 0
            except AgentError as exc:
                if time.monotonic() - started > args.timeout:
                    print(f"giving up: {exc}", file=sys.stderr)
                    return 1
                print(f"  not yet: {exc}", file=sys.stderr)
                await asyncio.sleep(10)
    except AgentError as exc:
        print(f"warmup failed: {exc}", file=sys.stderr)
        return 1
    finally:
        close = getattr(tts, "aclose", None)
        if close is not None:
            await close()
