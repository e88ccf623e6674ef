"""Settings: the only reader of ``os.environ``.

Every value can be set with an environment variable ``AGENT_<SECTION>__<FIELD>`` (for example
``AGENT_SERVER__PORT=9000``) or from a ``.env``-style file named by ``--env-file``. ``config/local.env``
documents each one. Settings are read once in ``agent.__main__`` and passed down as typed values.

This package is the settings' public face: import from ``agent.config``, never from its modules. One module per
reason to change: ``server`` (the listener), ``audio`` (wire formats, echo), ``turns`` (VAD, turn-taking),
``models`` (ASR, LLM, TTS), ``voices`` (store, fidelity), ``phone`` (the gateways), ``auth`` (tokens), ``tools``
(the server's own tools; their file is read by ``tool_file``), ``limits`` (where per-tenant and
per-address limits are counted: here or in a shared Redis), ``tracing`` (OpenTelemetry's ``OTEL_*`` variables),
and ``settings``, which composes them;
``credentials`` and ``addresses`` are what sections share, and ``policy_fields`` how a setting of the session core
names the core field it sets (``core``) and how a policy is built from those (``build``). Three pure modules
hold the rules for what the operator's lists may name, read here at load time and applied above (so they are
imported by their own names): ``origins`` (the browser Origin allow-list: the upgrade's check), ``tool_hosts``
(the hosts a tool may reach: the adapters' check at each connection, on ``special_addresses``' table) and
``tenants`` (tenant names: the tokens').
"""

from agent.config.addresses import cidrs
from agent.config.audio import AudioSettings, EchoSettings
from agent.config.auth import MIN_SECRET_BYTES, AuthSettings
from agent.config.credentials import WithSecrets, is_blank
from agent.config.limits import LimitsSettings
from agent.config.models import AsrSettings, LlmSettings, TtsSettings
from agent.config.phone import AudioSocketSettings, TelnyxSettings, TwilioSettings, VonageSettings
from agent.config.policy_fields import CoreField, build, declared
from agent.config.server import ServerSettings
from agent.config.settings import Settings, load_settings
from agent.config.tool_file import ToolsFile
from agent.config.tools import ToolSettings
from agent.config.tracing import TracingSettings
from agent.config.turns import SPECULATIVE_LOCAL_MS, SPECULATIVE_REMOTE_MS, TurnSettings, VadSettings
from agent.config.voices import FidelitySettings, VoicesSettings

__all__ = [
    "MIN_SECRET_BYTES",
    "SPECULATIVE_LOCAL_MS",
    "SPECULATIVE_REMOTE_MS",
    "AsrSettings",
    "AudioSettings",
    "AudioSocketSettings",
    "AuthSettings",
    "CoreField",
    "EchoSettings",
    "FidelitySettings",
    "LimitsSettings",
    "LlmSettings",
    "ServerSettings",
    "Settings",
    "TelnyxSettings",
    "ToolSettings",
    "ToolsFile",
    "TracingSettings",
    "TtsSettings",
    "TurnSettings",
    "TwilioSettings",
    "VadSettings",
    "VoicesSettings",
    "VonageSettings",
    "WithSecrets",
    "build",
    "cidrs",
    "declared",
    "is_blank",
    "load_settings",
]
