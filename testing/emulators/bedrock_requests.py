"""What Bedrock's ConverseStream refuses with a ``ValidationException``, and the message it says it with.

The checks are the service's (the ``bedrock-runtime`` service model's shapes and patterns, and the messages the
service answers with): a conversation that starts with a user message and alternates roles; content blocks that
are non-blank text, ``toolUse`` (assistant messages only; ``toolUseId`` ``[a-zA-Z0-9_.:-]{1,64}``, ``name``
``[a-zA-Z0-9_-]{1,64}``, an object ``input``) or ``toolResult`` (user messages only, first in the message, each
answering a ``toolUse`` of the assistant message just before; non-empty content when its status is ``error``),
every ``toolUse`` answered in the next message; no ``toolUse`` / ``toolResult`` block without a ``toolConfig``;
a ``toolConfig`` of well-formed tool specs and one ``toolChoice`` (``auto``, ``any`` or a declared ``tool``);
the inference config's types. ``validation_error(body)`` returns the message, or ``None`` for a valid body.
"""

from __future__ import annotations

import re
from typing import Any

_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

MUST_START_WITH_USER = (
    "A conversation must start with a user message. Try again with a conversation that starts with a user message."
)
MUST_ALTERNATE = (
    "A conversation must alternate between user and assistant roles. "
    "Make sure the conversation alternates between user and assistant roles and try again."
)
NO_TOOL_CONFIG = "The toolConfig field must be defined when using toolUse and toolResult content blocks."
TOO_MANY_RESULTS = (
    "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn."
)
UNEXPECTED_RESULT = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
MISSING_RESULTS = "Expected toolResult blocks at messages.{i}.content for the following Ids: {ids}"
RESULTS_NOT_FIRST = (
    "messages.{i}: Did not find {n} `tool_result` block(s) at the beginning of this message. "
    "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
)


def validation_error(body: Any) -> str | None:
    """The message Bedrock would answer an invalid ConverseStream body with, or ``None``."""
    if not isinstance(body, dict):
        return "Malformed input request, please reformat your input and try again."
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return MUST_START_WITH_USER
    problem = _messages_problem(messages)
    if problem is not None:
        return problem
    uses_tools = any(
        isinstance(block, dict) and ("toolUse" in block or "toolResult" in block)
        for message in messages
        for block in message["content"]
    )
    config = body.get("toolConfig")
    if config is None and uses_tools:
        return NO_TOOL_CONFIG
    if config is not None:
        problem = _tool_config_problem(config)
        if problem is not None:
            return problem
    system = body.get("system", [])
    if not isinstance(system, list) or not all(isinstance(s, dict) and isinstance(s.get("text"), str) for s in system):
        return "Malformed input request: system must be a list of text blocks."
    inference = body.get("inferenceConfig", {})
    if not isinstance(inference, dict):
        return "Malformed input request: inferenceConfig."
    max_tokens = inference.get("maxTokens", 1)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "The maximum tokens you requested exceeds the model limit."
    temperature = inference.get("temperature", 0.0)
    if not isinstance(temperature, int | float) or not 0 <= temperature <= 1:
        return "temperature: must be between 0 and 1"
    return None


def _block_problem(block: Any, role: str, at: str) -> str | None:
    if not isinstance(block, dict) or len(block) != 1:
        return f"Malformed input request: {at} must have exactly one member."
    if "text" in block:
        if not isinstance(block["text"], str) or not block["text"].strip():
            return "The text field in the ContentBlock object is blank. Add text and try again."
        return None
    if "toolUse" in block:
        use = block["toolUse"]
        if role != "assistant":
            return f"Malformed input request: {at}.toolUse is allowed in assistant messages only."
        if not isinstance(use, dict) or not _TOOL_USE_ID.fullmatch(str(use.get("toolUseId", ""))):
            return f"1 validation error detected: Value at '{at}.toolUse.toolUseId' failed to satisfy constraint."
        if not _TOOL_NAME.fullmatch(str(use.get("name", ""))):
            return f"1 validation error detected: Value at '{at}.toolUse.name' failed to satisfy constraint."
        if not isinstance(use.get("input"), dict):
            return f"Malformed input request: {at}.toolUse.input must be a JSON object."
        return None
    if "toolResult" in block:
        result = block["toolResult"]
        if role != "user":
            return f"Malformed input request: {at}.toolResult is allowed in user messages only."
        if not isinstance(result, dict) or not _TOOL_USE_ID.fullmatch(str(result.get("toolUseId", ""))):
            return f"1 validation error detected: Value at '{at}.toolResult.toolUseId' failed to satisfy constraint."
        content, status = result.get("content"), result.get("status", "success")
        if status not in ("success", "error"):
            return f"Malformed input request: {at}.toolResult.status must be success or error."
        if not isinstance(content, list) or not all(
            isinstance(part, dict) and len(part) == 1 and ("text" in part or "json" in part) for part in content
        ):
            return f"Malformed input request: {at}.toolResult.content."
        if status == "error" and not content:
            return f"The content field at {at}.toolResult cannot be empty when status value is error."
        return None
    return f"Malformed input request: {at} has an unsupported content block."


def _messages_problem(messages: list[Any]) -> str | None:
    expected = "user"
    open_uses: list[str] = []  # the toolUseIds of the assistant message before, to be answered now
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return "Malformed input request: invalid message role."
        role = message["role"]
        if role != expected:
            return MUST_START_WITH_USER if i == 0 else MUST_ALTERNATE
        content = message.get("content")
        if not isinstance(content, list) or not content:
            return "The content field in the Message object is empty. Add a ContentBlock object and try again."
        for j, block in enumerate(content):
            problem = _block_problem(block, role, f"messages.{i}.content.{j}")
            if problem is not None:
                return problem
        results = [(j, b["toolResult"]["toolUseId"]) for j, b in enumerate(content) if "toolResult" in b]
        if len(results) > len(open_uses):
            return TOO_MANY_RESULTS.format(i=i)
        for j, tool_use_id in results:
            if tool_use_id not in open_uses:
                return UNEXPECTED_RESULT.format(i=i, j=j, id=tool_use_id)
        if open_uses:
            missing = [u for u in open_uses if u not in {r for _, r in results}]
            if missing:
                return MISSING_RESULTS.format(i=i, ids=", ".join(missing))
            if any(j >= len(open_uses) for j, _ in results):
                return RESULTS_NOT_FIRST.format(i=i, n=len(open_uses))
        open_uses = [b["toolUse"]["toolUseId"] for b in content if "toolUse" in b]
        expected = "assistant" if role == "user" else "user"
    return None


def _tool_config_problem(config: Any) -> str | None:
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, list) or not tools:
        return "The toolConfig.tools field must contain at least one tool."
    names: list[str] = []
    for k, tool in enumerate(tools):
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        if not isinstance(spec, dict) or not _TOOL_NAME.fullmatch(str(spec.get("name", ""))):
            return f"1 validation error detected: Value at 'toolConfig.tools.{k}.member.toolSpec.name' failed."
        if "description" in spec and (not isinstance(spec["description"], str) or not spec["description"]):
            return f"1 validation error detected: Value at 'toolConfig.tools.{k}.member.toolSpec.description'."
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or not isinstance(schema.get("json"), dict):
            return f"The value at toolConfig.tools.{k}.toolSpec.inputSchema.json must be a JSON object schema."
        names.append(spec["name"])
    if len(set(names)) != len(names):
        return "The tool names in toolConfig.tools must be unique."
    choice = config.get("toolChoice")
    if choice is None:
        return None
    if not isinstance(choice, dict) or len(choice) != 1 or next(iter(choice)) not in ("auto", "any", "tool"):
        return "Malformed input request: toolConfig.toolChoice must have exactly one of auto, any, tool."
    if "tool" in choice and (not isinstance(choice["tool"], dict) or choice["tool"].get("name") not in names):
        return "The tool named in toolConfig.toolChoice.tool is not defined in toolConfig.tools."
    return None
