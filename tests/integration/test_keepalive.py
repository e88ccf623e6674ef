"""A peer that stops reading at any moment is let go, over real sockets: the keepalive finds it, and nothing of its
connection stays behind, neither in the server nor in the server's kernel.

The peer (``testing.raw_peer.RawPeer``) completes the upgrade to ``/ws``, sends ``session.start``, reads up to
``session.started`` (answering pings meanwhile) and never reads again, nor answers a ping; its receive buffer is
4 KiB, so what the server sends soon stops being taken. Three moments: during a long greeting with the send
deadline out of reach (the keepalive's pings are queued behind audio the peer never takes),
between replies (everything was handed to the kernel, the writer is idle), and during a reply where the send
deadline closes it first. Each time the server must drop the connection (its slot freed) and its kernel must not
keep the socket (a graceful close towards a peer that reads nothing leaves an orphan in FIN-WAIT-1 holding what
the peer never took, and the peer's side ESTABLISHED, for minutes). Stand-in models keep it fast; settings are
small, and every wait only guards against a hang.
"""

from __future__ import annotations

import json
import sys

import pytest

from agent.front_door.listener import running_server
from testing.raw_peer import PROC_TCP, RawPeer
from testing.sockets import WAIT_S, until
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not PROC_TCP.exists(), reason="reads the kernel's sockets (Linux)"
)

START = json.dumps({"type": "session.start", "sample_rate": 16000, "voice": None})
QUICK = {"ping_interval_s": 0.2, "ping_timeout_s": 0.2, "close_timeout_s": 0.2}


@pytest.mark.parametrize(
    ("greeting_s", "server"),
    [
        # The greeting is far more than the buffers hold; the send deadline is out of the test's reach.
        pytest.param(600.0, QUICK | {"send_timeout_s": 600.0}, id="keepalive-during-a-reply"),
        # The greeting fits the kernel's buffers: the writer is idle, only pings go out.
        pytest.param(0.3, QUICK | {"send_timeout_s": 600.0}, id="keepalive-between-replies"),
        # The send deadline finds it first (1008 client is not reading).
        pytest.param(
            600.0,
            {"ping_interval_s": 0.5, "ping_timeout_s": 0.5, "close_timeout_s": 0.2, "send_timeout_s": 0.2},
            id="send-deadline-during-a-reply",
        ),
    ],
)
async def test_a_peer_that_stops_reading_is_dropped_and_the_kernel_lets_go(
    greeting_s: float, server: dict[str, float]
) -> None:
    components = standin_components(greeting_s)
    settings = local_settings(server=server, turn={"greeting_text": "Hi."})
    async with running_server(settings, lambda: components) as srv:
        await srv.wait_ready()
        peer = await RawPeer.connect(srv.port)
        try:
            await peer.send_text(START)
            await peer.read_until(b'"session.started"')  # and never reads again
            await until(lambda: srv.state.connections == 0, WAIT_S, "the server to drop the peer that does not read")
            try:
                await until(lambda: not peer.server_side_states(srv.port), WAIT_S, "the kernel to let go of it")
            except AssertionError as exc:
                raise AssertionError(f"{exc}: the server's side is {peer.server_side_states(srv.port)}") from None
        finally:
            peer.abort()
