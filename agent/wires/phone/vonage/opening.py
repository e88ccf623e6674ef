"""The start of a Vonage call (``/vonage``): the telephony core's opening with Vonage's start decoder and lead.

Its one reason to change is what Vonage sends before the call starts (``websocket:connected``: ``vonage_start``
in ``agent.wires.phone.vonage.gateway``) and how far ahead its audio is sent (``vonage.lead_ms``).
"""

from __future__ import annotations

from agent.runtime.call.prestart import Opened, PreStart
from agent.wires.phone.opening import open_call
from agent.wires.phone.vonage.gateway import vonage_start


async def open_vonage(pre: PreStart) -> Opened | None:
    """Vonage Voice API WebSockets: wait for ``websocket:connected``; ``None``: no call (see ``PreStart.close``)."""
    return await open_call(pre, vonage_start, pre.settings.vonage.lead_ms)
