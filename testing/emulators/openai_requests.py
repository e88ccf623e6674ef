"""What an OpenAI-compatible chat-completions server refuses with HTTP 400, and the message it says it with.

The checks are the service's (OpenAI's API reference and error messages; vLLM's for ``tool_choice``, which
OpenAI-compatible servers share): messages of known roles with string content (an assistant message with
``tool_calls`` may have ``null``); every ``tool`` message answers a ``tool_calls`` id of the assistant message
just before it (the run of tool messages after it), and every call is answered before the conversation goes on;
``tools`` a non-empty list of well-formed ``function`` tools; ``tool_choice`` ``none`` / ``auto`` / ``required`` or
a named function that ``tools`` declares. ``invalid(body)`` returns the message, or ``None`` for a valid body.
"""

from __future__ import annotations

import re
from typing import Any

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ROLES = ("system", "developer", "user", "assistant", "tool")

ORPHAN_TOOL_MESSAGE = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
)
UNANSWERED_CALLS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
CHOICE_WITHOUT_TOOLS = "When using `tool_choice`, `tools` must be set."
CHOICE_NOT_DECLARED = "The tool specified in `tool_choice` does not match any of the specified `tools`"


def invalid(body: Any) -> str | None:
    """The message the service answers a bad request body with (HTTP 400), or ``None``."""
    if not isinstance(body, dict):
        return "Expected a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    problem = _messages_problem(messages) or _tools_problem(body.get("tools"))
    problem = problem or _choice_problem(body.get("tool_choice"), body.get("tools"))
    if problem is not None:
        return problem
    if body.get("stream") is not True:
        return "this emulator only streams"
    return None


def _call_problem(call: Any, at: str) -> str | None:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
        return f"Missing required parameter: '{at}.id'."
    if call.get("type") != "function":
        return f"Invalid value: '{call.get('type')}'. Supported values are: 'function'. ({at}.type)"
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
        return f"Missing required parameter: '{at}.function.name'."
    if not isinstance(function.get("arguments"), str):
        return f"Invalid type for '{at}.function.arguments': expected a string."
    return None


def _messages_problem(messages: list[Any]) -> str | None:
    awaiting: list[str] = []  # the call ids of the last assistant message not answered yet
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            return "invalid message role"
        role, content, calls = message["role"], message.get("content"), message.get("tool_calls")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                return f"Missing required parameter: 'messages[{i}].tool_call_id'."
            if not isinstance(content, str):
                return "message content must be a string"
            if call_id not in awaiting:
                return ORPHAN_TOOL_MESSAGE
            awaiting.remove(call_id)
            continue
        if awaiting:
            return UNANSWERED_CALLS.format(ids=", ".join(awaiting))
        if role == "assistant" and calls is not None:
            if not isinstance(calls, list) or not calls:
                return f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum length 1."
            for j, call in enumerate(calls):
                problem = _call_problem(call, f"messages[{i}].tool_calls[{j}]")
                if problem is not None:
                    return problem
            awaiting = [call["id"] for call in calls]
            if content is not None and not isinstance(content, str):
                return "message content must be a string"
        elif not isinstance(content, str):
            return "message content must be a string"
    if awaiting:
        return UNANSWERED_CALLS.format(ids=", ".join(awaiting))
    return None


def _tools_problem(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not tools:
        return "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead."
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            return f"Invalid value for 'tools[{i}].type': supported values are: 'function'."
        function = tool.get("function")
        if not isinstance(function, dict):
            return f"Missing required parameter: 'tools[{i}].function'."
        name = function.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            return f"Invalid 'tools[{i}].function.name': string does not match pattern '^[a-zA-Z0-9_-]+$' (1-64)."
        if "description" in function and not isinstance(function["description"], str):
            return f"Invalid type for 'tools[{i}].function.description': expected a string."
        if "parameters" in function and not isinstance(function["parameters"], dict):
            return f"Invalid type for 'tools[{i}].function.parameters': expected an object."
    return None


def _choice_problem(choice: Any, tools: Any) -> str | None:
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            return f"Invalid value for `tool_choice`: {choice}"
        return None if choice == "none" or tools else CHOICE_WITHOUT_TOOLS
    function = choice.get("function") if isinstance(choice, dict) and choice.get("type") == "function" else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return 'Invalid `tool_choice`! Correct usage: `{"type": "function", "function": {"name": "my_function"}}`'
    if not tools:
        return CHOICE_WITHOUT_TOOLS
    names = {tool["function"]["name"] for tool in tools}
    return None if function["name"] in names else CHOICE_NOT_DECLARED
