"""The endpoints: one row per protocol a caller speaks, the one table the front door reads.

Its one reason to change is the set of protocols served. A row says where a protocol is reached (a WebSocket
``path``; none for one that brings its own ``listener``), how its call starts (``opening``), how its upgrade is
checked after the method and the Origin (``check``), what the settings expose through it (``exposure``), what
else its socket serves (``side``) and which of its handshake's headers are secrets (``secret_headers``: the
composition root hands them to the log filter, ``agent.security.logsafe``, which knows no wire). The routes
(``agent.front_door.routes``), the upgrade checks, the start-up exposure rules (``agent.front_door.exposure``)
and the URLs the server gives (``RunningServer.url``) are all read from here, and each path is written here
only. A new gateway is one new folder under ``agent/wires`` and one row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from agent.config import Settings
from agent.runtime.call.prestart import Opening
from agent.runtime.call.wire import SideChannels
from agent.runtime.server.state import ServerState
from agent.runtime.server.upgrade import CredentialCheck, deferred
from agent.security.exposure_rules import ExposureRule
from agent.wires.audiosocket import credential as audiosocket
from agent.wires.audiosocket.listener import AudioSocketListener
from agent.wires.audiosocket.opening import open_audiosocket
from agent.wires.browser.enrollment import Enrollments
from agent.wires.browser.opening import open_browser
from agent.wires.phone.credential import exposure_rule, upgrade_check
from agent.wires.phone.telnyx.codec import AUTH_HEADER as TELNYX_AUTH_HEADER
from agent.wires.phone.telnyx.credential import STREAM_TOKEN
from agent.wires.phone.telnyx.opening import open_telnyx
from agent.wires.phone.twilio.credential import SIGNATURE, TWILIO_SIGNATURE
from agent.wires.phone.twilio.opening import open_twilio
from agent.wires.phone.vonage.credential import AUTHORIZATION
from agent.wires.phone.vonage.opening import open_vonage
from agent.wires.realtime.credential import bearer_key
from agent.wires.realtime.opening import open_realtime


class EndpointListener(Protocol):
    """An endpoint's own listener, besides the server's WebSocket one (AudioSocket's TCP port): ``start`` it, then
    ``close`` it after the server's calls were told to close."""

    @property
    def port(self) -> int: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


EndpointListenerFactory = Callable[[Settings, ServerState, Opening], "EndpointListener | None"]
"""Makes an endpoint's own listener, sharing the server's state and running its calls with the opening given
(``None``: the settings leave it off)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    """What the endpoint is called (``RunningServer.url(name)``)."""
    opening: Opening
    """How a call starts (``agent.wires.<protocol>.opening``)."""
    path: str | None = None
    """The WebSocket path (``None``: reached through ``listener``)."""
    check: CredentialCheck = deferred
    """Who may upgrade, after the method and the Origin (default: the opening decides, in the protocol's words)."""
    exposure: ExposureRule | None = None
    """What the settings expose through the endpoint, said at start-up (``None``: nothing of its own)."""
    listener: EndpointListenerFactory | None = None
    """A listener of its own (AudioSocket's TCP one), started and closed with the server."""
    side: SideChannels | None = None
    """Requests served beside the call on the same socket (protocol v1's voice enrollment)."""
    secret_headers: tuple[str, ...] = ()
    """Headers of its handshake that carry a credential of its own (``Authorization`` and the other common ones
    are the log filter's already): their values never reach a log."""


ENDPOINTS: tuple[Endpoint, ...] = (
    # The first row is the server's own protocol (v1): a request for an unknown path is pointed to it.
    Endpoint("browser", open_browser, "/ws", side=Enrollments),
    Endpoint("realtime", open_realtime, "/v1/realtime", bearer_key),
    Endpoint(
        "twilio",
        open_twilio,
        "/twilio",
        upgrade_check(SIGNATURE),
        exposure_rule(SIGNATURE),
        secret_headers=(TWILIO_SIGNATURE,),
    ),
    Endpoint(
        "telnyx",
        open_telnyx,
        "/telnyx",
        upgrade_check(STREAM_TOKEN),
        exposure_rule(STREAM_TOKEN),
        secret_headers=(TELNYX_AUTH_HEADER,),
    ),
    Endpoint("vonage", open_vonage, "/vonage", upgrade_check(AUTHORIZATION), exposure_rule(AUTHORIZATION)),
    Endpoint("audiosocket", open_audiosocket, exposure=audiosocket.exposure, listener=AudioSocketListener.on),
)
"""Every protocol served, in the order their exposure is said at start-up."""

PATHS: Mapping[str, Endpoint] = {endpoint.path: endpoint for endpoint in ENDPOINTS if endpoint.path is not None}
"""The WebSocket endpoints by path."""

SECRET_HEADERS: tuple[str, ...] = tuple(dict.fromkeys(name for row in ENDPOINTS for name in row.secret_headers))
"""The headers the wires declare secret, for the log filter (``agent.__main__`` hands them to
``agent.security.logsafe.configure``)."""


def endpoint(name: str) -> Endpoint:
    """The endpoint called ``name``. Raises ``KeyError`` for none."""
    for row in ENDPOINTS:
        if row.name == name:
            return row
    raise KeyError(name)
