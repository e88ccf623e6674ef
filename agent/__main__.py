"""``python -m agent``: start the voice agent server.

Reads settings once (environment ``AGENT_*`` and an optional ``--env-file``), refuses an unsafe exposure
(``agent.front_door.exposure``: exit code 2), configures logging (``agent.security.logsafe``: no credential in any
record, at any level), starts listening at once and loads the models in the background (``/healthz`` is 503 until
they are loaded). Invalid settings also exit with code 2.

SIGTERM or SIGINT drains (``RunningServer.drain``): no new calls, live calls finish their reply, hear the
goodbye and close 1001 within ``AGENT_SERVER__DRAIN_S``; then exit 0. A second signal closes them at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from agent.cli import endpoint
from agent.cli import tokens as tokens_cli
from agent.cli import voices as voices_cli
from agent.config import Settings, load_settings
from agent.errors import ConfigError
from agent.runtime.server.event_loop import loop_factory, loop_name
from agent.security import logsafe
from agent.security.auth import DEFAULT_TENANT, Authenticator

if TYPE_CHECKING:
    from agent.front_door.listener import RunningServer
log = logging.getLogger("agent")
CLI_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agent",
        description="Real-time voice agent server. WebSocket protocol v1 at /ws, health at /healthz. "
        "Every setting can also be given as an AGENT_<SECTION>__<FIELD> environment variable "
        "(see config/local.env).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="start the server (the default command)")
    for p in (parser, serve):
        p.add_argument("--host", help="listen address (default 127.0.0.1, or AGENT_SERVER__HOST)")
        p.add_argument("--port", type=int, help="listen port (default 8765, or AGENT_SERVER__PORT; 0 = any)")
        p.add_argument("--env-file", type=Path, help="read settings from this env file as well")
        p.add_argument("--log-level", help="DEBUG, INFO, WARNING... (default INFO, or AGENT_LOG_LEVEL)")
        p.add_argument(
            "--print-token",
            action="store_true",
            help="when auth is on, print a token for the browser page on stdout at start-up "
            f"(tenant {DEFAULT_TENANT!r}, scopes call and enroll, valid AGENT_AUTH__MAX_TTL_S)",
        )
    voices_cli.add_parser(sub)
    tokens_cli.add_parser(sub)
    endpoint.add_parser(sub)
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    settings = load_settings(args.env_file)
    server = settings.server.model_copy(
        update={k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    )
    updates: dict[str, object] = {"server": server}
    if args.log_level:
        updates["log_level"] = args.log_level
    return settings.model_copy(update=updates)


def print_local_token(settings: Settings, page_url: str) -> None:
    """``--print-token``: a token for the browser page on this machine, alone on one stdout line."""
    auth = Authenticator.from_settings(settings.auth)
    if not auth.enabled:
        log.info("--print-token: auth is off (AGENT_AUTH__SECRET unset), the page needs no token")
        return
    print(auth.mint(DEFAULT_TENANT, ("call", "enroll"), settings.auth.max_ttl_s), flush=True)
    log.info("printed a token (tenant %s, call+enroll) on stdout: paste it into %s (Token)", DEFAULT_TENANT, page_url)


async def serve(settings: Settings, print_token: bool = False) -> int:
    # Imported here: the other commands (tokens, voices) do not load the server and its models.
    from agent.front_door.listener import running_server
    from agent.wiring import build_components, build_limiter

    limiter = build_limiter(settings)
    async with limiter, running_server(settings, lambda: build_components(settings, limiter), limiter) as server:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        log.info("listening on %s (health: %s/healthz)", server.ws_url, server.http_url)
        if print_token:  # after the handlers: whoever reads the token may stop the server at once
            print_local_token(settings, server.http_url + "/")
        ready = asyncio.create_task(server.wait_ready())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done() and ready.exception() is not None:
            log.error("cannot serve: %s", ready.exception())
            stopped.cancel()
            return 1
        if not stopped.done():
            log.info("ready: try `python -m clients.cli ws --url %s --wav YOUR.wav`", server.ws_url)
            await stopped
        ready.cancel()
        stop.clear()
        await drain(server, stop)
        log.info("shutting down")
        components = server.state.components
    # Released once the listener has closed every call (1001) and their handlers have returned.
    if components is not None:
        await components.aclose()
    return 0


async def drain(server: RunningServer, again: asyncio.Event) -> None:
    """Let the live calls finish (``RunningServer.drain``) unless ``again`` is set (a second signal) first."""
    log.info("draining %d connection(s) (a second signal closes them at once)", len(server.state.calls))
    draining = asyncio.create_task(server.drain())
    second = asyncio.create_task(again.wait())
    await asyncio.wait({draining, second}, return_when=asyncio.FIRST_COMPLETED)
    if not draining.done():
        log.info("second signal: closing every call now")
    elif not draining.result():
        log.warning("drain time is over: closing the calls still open")
    for task in (draining, second):
        task.cancel()
    await asyncio.gather(draining, second, return_exceptions=True)


def _settings_problem(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        name = "AGENT_" + "__".join(str(part) for part in error["loc"]).upper()
        lines.append(f"  {name}: {error['msg'].removeprefix('Value error, ')}")
    return "invalid settings:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from packages; never reach for a hub
    try:
        settings = settings_from(args)
    except ValidationError as exc:
        print(f"error: {_settings_problem(exc)}", file=sys.stderr)
        return 2
    if args.command == "tokens":
        return tokens_cli.run(args, settings)
    if args.command == "voices":
        logsafe.configure(logging.WARNING, fmt=CLI_LOG_FORMAT)
        return voices_cli.run(args, settings)
    if args.command == "endpoint":
        logsafe.configure(logging.WARNING, fmt=CLI_LOG_FORMAT)
        return endpoint.run(args, settings)
    # Imported here, as in ``serve``: the other commands do not load the server (the exposure rules are the
    # ENDPOINTS table's, which brings the wires and the runtime).
    from agent.front_door.exposure import check_exposure
    from agent.wires.endpoints import SECRET_HEADERS

    exposure = check_exposure(settings)
    if exposure.refusals:
        for refusal in exposure.refusals:
            print(f"refusing to start: {refusal}", file=sys.stderr)
        return 2
    # No credential in any record, at any level: the wires' own secret headers (a provider's signature) included.
    logsafe.configure(settings.log_level.upper(), secret_headers=SECRET_HEADERS)
    for warning in exposure.warnings:
        log.warning("%s", warning)
    try:
        factory = loop_factory(settings.server.event_loop)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    log.info("event loop: %s", loop_name(factory))
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(serve(settings, print_token=bool(getattr(args, "print_token", False))))


if __name__ == "__main__":
    sys.exit(main())
