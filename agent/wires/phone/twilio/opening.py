"""The start of a Twilio call (``/twilio``): the telephony core's opening with Twilio's start decoder and lead.

Its one reason to change is what Twilio sends before the call starts (``connected`` then ``start``: ``twilio_start``
in ``agent.wires.phone.twilio.gateway``) and how far ahead its audio is sent (``twilio.lead_ms``).
"""

from __future__ import annotations

from agent.runtime.call.prestart import Opened, PreStart
from agent.wires.phone.opening import open_call
from agent.wires.phone.twilio.gateway import twilio_start


async def open_twilio(pre: PreStart) -> Opened | None:
    """Twilio Media Streams: wait for ``start``; ``None``: no call (see ``PreStart.close``)."""
    return await open_call(pre, twilio_start, pre.settings.twilio.lead_ms)
