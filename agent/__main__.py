"""``python -m agent``: start the voice agent server.

Reads settings once (environment ``AGENT_*`` and an optional ``--env-file``), configures logging, starts
listening at once and loads the models in the background (``/healthz`` is 503 until they are loaded).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from agent import endpoint, voices_cli
from agent.config import Settings, load_settings
from agent.runtime.server import running_server
from agent.wiring import build_components

log = logging.getLogger("agent")


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
    voices_cli.add_parser(sub)
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


async def serve(settings: Settings) -> int:
    async with running_server(settings, lambda: build_components(settings)) as server:
        log.info("listening on %s (health: %s/healthz)", server.ws_url, server.http_url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        ready = asyncio.create_task(server.wait_ready())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done() and ready.exception() is not None:
            log.error("cannot serve: %s", ready.exception())
            stopped.cancel()
            return 1
        if not stopped.done():
            log.info("ready: try `python -m clients.cli --url %s --wav YOUR.wav`", server.ws_url)
            await stopped
        ready.cancel()
        log.info("shutting down")
        if server.state.components is not None:
            await server.state.components.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from packages; never reach for a hub
    settings = settings_from(args)
    if args.command == "voices":
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        return voices_cli.run(args, settings)
    if args.command == "endpoint":
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        return endpoint.run(args, settings)
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return asyncio.run(serve(settings))


if __name__ == "__main__":
    sys.exit(main())
