"""The wires: one package per protocol a caller speaks, each holding everything about it.

``browser`` (protocol v1), ``realtime`` (OpenAI Realtime), ``phone`` (the telephony core, and ``twilio``,
``telnyx``, ``vonage`` on it) and ``audiosocket`` (Asterisk, over TCP): a pure codec, the wire or gateway, the
opening, the credential check. ``agent.wires.endpoints`` holds the one table of them (``ENDPOINTS``) that the
front door reads. It is not imported here, so that a client importing a codec does not load the server's runtime.
"""
