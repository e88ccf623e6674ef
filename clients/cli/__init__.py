"""Command-line client: talk to the voice agent as each of its callers would, and save its spoken replies.

    python -m clients.cli ws --wav question.wav --out reply.wav          # protocol v1 on /ws (the browser's)
    python -m clients.cli mic                                           # live, microphone and speaker
    python -m clients.cli realtime --wav q.wav --out reply.wav          # an OpenAI Realtime API app
    python -m clients.cli twilio | telnyx | vonage --wav q.wav --out reply.wav   # a phone gateway
    python -m clients.cli audiosocket --port 9092 --wav q.wav --out reply.wav    # Asterisk AudioSocket()

One module per command (``ws``, ``mic``, ``realtime``, ``twilio``, ``telnyx``, ``vonage``, ``audiosocket``),
the options they share in ``options``, the parser built from the ``COMMANDS`` table in ``commands``; the old
flag form (``--twilio``) is translated by ``legacy``. ``--token`` (or ``AGENT_TOKEN``) is sent as
``Authorization: Bearer`` on the upgrade, for a server with auth on (never in the URL). This package re-exports
what scripts and tests call: ``parse_args``, ``run``, ``main`` and the exit statuses.
"""

from clients.cli.commands import COMMANDS, build_parser, main, parse_args, run
from clients.cli.options import EXIT_CONNECT, EXIT_FAILED, EXIT_OK, EXIT_TIMEOUT

__all__ = [
    "COMMANDS",
    "EXIT_CONNECT",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_TIMEOUT",
    "build_parser",
    "main",
    "parse_args",
    "run",
]
