"""The start of a Telnyx call (``/telnyx``): the telephony core's opening with Telnyx's start decoder and lead.

Its one reason to change is what Telnyx sends before the call starts (``connected`` then ``start``: ``telnyx_start``
in ``agent.wires.phone.telnyx.gateway``) and how far ahead its audio is sent (``telnyx.lead_ms``).
"""

from __future__ import annotations

from agent.runtime.call.prestart import Opened, PreStart
from agent.wires.phone.opening import open_call
from agent.wires.phone.telnyx.gateway import telnyx_start


async def open_telnyx(pre: PreStart) -> Opened | None:
    """Telnyx media streaming: wait for ``start``; ``None``: no call (see ``PreStart.close``)."""
    return await open_call(pre, telnyx_start, pre.settings.telnyx.lead_ms)
