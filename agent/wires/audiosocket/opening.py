"""The start of an Asterisk AudioSocket call: the telephony core's opening, started by the call's UUID.

Its one reason to change is what an AudioSocket call opens with: the UUID message (``audiosocket_start`` in
``agent.wires.audiosocket.gateway``), answered in ``audiosocket.voice`` (empty: the server's default), its audio
sent ``audiosocket.lead_ms`` ahead.
"""

from __future__ import annotations

from agent.runtime.call.prestart import Opened, PreStart
from agent.wires.audiosocket.gateway import audiosocket_start
from agent.wires.phone.opening import open_call


async def open_audiosocket(pre: PreStart) -> Opened | None:
    """Wait for the call's UUID; ``None``: no call (a hangup first, the peer gone, or time ran out)."""
    cfg = pre.settings.audiosocket
    return await open_call(pre, audiosocket_start(cfg.voice or None), cfg.lead_ms)
