"""``python -m agent tokens ...``: mint and check access tokens with the server's ``AGENT_AUTH__SECRET``.

``mint`` prints the token alone on stdout (so ``TOKEN=$(python -m agent tokens mint ...)`` works); errors go
to stderr. Exit codes: 0 done, 1 a token that does not verify, 2 refused (no secret, bad tenant, scope or
lifetime) or a bad command line (argparse).

Reason to change: the operator's commands for tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from agent.config import Settings
from agent.security.auth import (
    DEFAULT_TENANT,
    MAX_TENANT,
    SCOPES,
    Authenticator,
    TokenError,
    is_valid_tenant,
    verify_token,
)

NO_SECRET = (
    "auth is off: set AGENT_AUTH__SECRET (at least 32 bytes, the same value as the server's) to mint tokens; "
    "make one with: python -c 'import secrets; print(secrets.token_urlsafe(48))'"
)


def _tenant(value: str) -> str:
    if not is_valid_tenant(value):
        raise argparse.ArgumentTypeError(
            f"a tenant is 1-{MAX_TENANT} lower-case letters, digits, '-' or '_', starting with a letter or digit"
        )
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``tokens`` command and its subcommands to ``python -m agent``'s subparsers."""
    tokens = sub.add_parser(
        "tokens",
        help="mint and check access tokens",
        description="Signed, expiring access tokens for /ws and /twilio, made with AGENT_AUTH__SECRET "
        "(the server and this command must share it). A token names a tenant and its scopes: "
        "call (hold a conversation), enroll (add and remove the tenant's voices), admin (everything).",
    )
    actions = tokens.add_subparsers(dest="tokens_command", metavar="ACTION", required=True)
    mint = actions.add_parser(
        "mint",
        help="print a new token on stdout",
        description="Print a new token, alone, on stdout. Example: "
        "python -m agent tokens mint --tenant acme --scope call --scope enroll --ttl 600",
    )
    mint.add_argument(
        "--tenant",
        type=_tenant,
        default=DEFAULT_TENANT,
        help=f"the caller's tenant: it sees and uses only this tenant's voices (default {DEFAULT_TENANT!r})",
    )
    mint.add_argument(
        "--scope",
        action="append",
        choices=SCOPES,
        required=True,
        help="what the token allows; repeat for several (call, enroll, admin)",
    )
    mint.add_argument(
        "--ttl",
        type=int,
        help="lifetime in seconds (default AGENT_AUTH__DEFAULT_TTL_S; at most AGENT_AUTH__MAX_TTL_S)",
    )
    verify = actions.add_parser(
        "verify",
        help="check a token and print what it grants (JSON)",
        description="Check a token against AGENT_AUTH__SECRET and print its tenant, scopes and id as JSON.",
    )
    verify.add_argument("token", help="the token to check")
    return tokens


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run a parsed ``tokens`` command; returns the process exit code."""
    auth = Authenticator.from_settings(settings.auth)
    secret = settings.auth.secret
    if secret is None:
        print(f"error: {NO_SECRET}", file=sys.stderr)
        return 2
    if args.tokens_command == "verify":
        try:
            principal = verify_token(
                secret.get_secret_value().encode(), args.token, now=time.time(), max_ttl_s=settings.auth.max_ttl_s
            )
        except TokenError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        shown = {"tenant": principal.tenant, "scopes": sorted(principal.scopes), "subject": principal.subject}
        print(json.dumps(shown))
        return 0
    try:
        token = auth.mint(args.tenant, args.scope, args.ttl)
    except TokenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(token)
    return 0
