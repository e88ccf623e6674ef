"""A reply's tool calls: which run where, what the reply waits on, when a call has timed out, when the caller
hears "one moment", how many rounds a reply may take, and what the history keeps of them.

One reason to change: the rules of a reply that calls tools. ``ToolRounds`` is the state of one turn's calls
(``Turn.tools``); the functions here decide and return effects or results, and the speaking side
(``agent.core.speaking``) puts them in order with the rest of the turn. A round is one request to the model:
when it ends having called tools and every call it made is answered, the next round asks the model again with
the calls and their results. Pure: no I/O, no clock (``now`` is a parameter).

Who may answer a call is part of its state: a server tool's call only the tool runner (``ToolDone``), a client's
only that client (``ToolResult``, ``from_client``); a client's result for any other call is refused
(``NOT_YOUR_CALL``). A result's text is what the tool or the client said, with ``failed`` set when it went wrong:
the model adapter says so in its own wire's way (a status, or an ``error: `` prefix), never the core.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Literal

from agent.core.events import (
    CancelTool,
    Effect,
    ErrorNotice,
    Notify,
    RunTool,
    ToolCalled,
    ToolOutcome,
    ToolResult,
    ToolTiming,
)
from agent.core.policies import ToolPolicy
from agent.ports import ChatMessage, ToolCall

CANCELLED = "cancelled: the caller spoke before the result came, and the reply was stopped"
"""What the model is told of a call whose reply the caller interrupted (the tool may still have acted)."""

NOT_YOUR_CALL = "not_your_call"
"""The code of a client's result refused because the call is not the client's to answer (a server tool's)."""

FromClient = Literal["taken", "kept", "late", "not_yours", "unknown"]
"""What became of a client's result for a call of the reply (``from_client``)."""


@dataclass(slots=True)
class PendingCall:
    """A call the reply waits on: where it runs, when it was made, when it times out."""

    call: ToolCall
    at: float
    deadline: float
    client: bool


@dataclass(slots=True)
class ToolRounds:
    """The tool calls of one turn's reply, across its rounds."""

    round: int = 1
    calls: list[ToolCall] = field(default_factory=list)
    """Every call of the reply, in the order the model made them."""
    results: dict[str, ChatMessage] = field(default_factory=dict)
    """The ``tool`` message answering each call, by call id."""
    pending: dict[str, PendingCall] = field(default_factory=dict)
    timings: list[ToolTiming] = field(default_factory=list)
    round_calls: int = 0
    """Calls made in the current round."""
    round_ended: bool = False
    """The model has finished writing the current round."""
    handed_over: bool = False
    """A client's tool was called and the client answers after the reply (``ToolPolicy.client_waits`` off): the
    reply ends with this round."""
    failed: bool = False
    """A call failed or timed out: if the model then says nothing, the caller hears the apology."""
    client_calls: set[str] = field(default_factory=set)
    """The calls sent to the client to run (``ToolCalled``): the only ones it may answer."""

    @property
    def waiting(self) -> bool:
        """The reply waits on a call's result."""
        return bool(self.pending)

    @property
    def waited_since(self) -> float | None:
        """When the oldest call still pending was made."""
        return min((p.at for p in self.pending.values()), default=None)

    def exchange(self, text: str) -> tuple[ChatMessage, ...]:
        """What a conversation holds of the reply: one assistant message with its ``text`` and every call, then
        the result of each call answered so far, in call order (none: no call was made)."""
        if not self.calls:
            return ()
        answered = (self.results[c.call_id] for c in self.calls if c.call_id in self.results)
        return (ChatMessage("assistant", text, tuple(self.calls)), *answered)


def call(rounds: ToolRounds, turn: int, made: ToolCall, policy: ToolPolicy, now: float) -> list[Effect]:
    """The model, writing ``turn``'s reply, called ``made``: run it (``RunTool`` for a server tool, ``ToolCalled``
    for the client's), or answer it at once with an error the model reads (no such tool, past the round bound,
    a call id used twice: it gets a new one, ``renamed``)."""
    rounds.round_calls += 1
    if any(c.call_id == made.call_id for c in rounds.calls):
        made = ToolCall(renamed(made.call_id, len(rounds.calls), policy.call_id_key), made.name, made.arguments)
    rounds.calls.append(made)
    spec = policy.spec(made.name)
    if spec is None:
        return _refuse(rounds, made, f"there is no tool named {made.name!r}")
    if rounds.round > policy.max_rounds or policy.choice == "none":
        return _refuse(rounds, made, f"no more tool calls in this reply (at most {policy.max_rounds} rounds)")
    client = spec.runs_on == "client"
    if client:
        rounds.client_calls.add(made.call_id)
    if client and not policy.client_waits:
        rounds.handed_over = True
        return [Notify(ToolCalled(turn, made))]
    rounds.pending[made.call_id] = PendingCall(made, now, now + spec.timeout_s, client)
    return [Notify(ToolCalled(turn, made))] if client else [RunTool(turn, made)]


def released(rounds: ToolRounds, now: float) -> None:
    """The calls of a reply prepared before the end of turn were held with it (none ran: a guess must not act);
    it is released at ``now``, and so are they: each one's time, and the wait before the hold phrase, start now."""
    for pending in rounds.pending.values():
        pending.deadline += now - pending.at
        pending.at = now


def renamed(call_id: str, n: int, key: str) -> str:
    """The new id of the ``n``-th call of a reply, which the model gave the id ``call_id`` of an earlier one: derived
    from ``key``, the session's secret (``ToolPolicy.call_id_key``), so that a client that sees ids cannot work
    out another call's (it could, were it ``<id>-<n>``). Letters, digits and ``_`` only, as every model's API
    accepts."""
    digest = hmac.new(key.encode(), f"{n}:{call_id}".encode(), hashlib.sha256).hexdigest()
    return f"call_{digest[:24]}"


def _refuse(rounds: ToolRounds, made: ToolCall, why: str) -> list[Effect]:
    rounds.results[made.call_id] = ChatMessage("tool", why, call_id=made.call_id, failed=True)
    return []


def from_client(rounds: ToolRounds, result: ToolResult, now: float) -> FromClient:
    """The client's ``result`` for a call of this reply: ``taken`` (it was pending: it joins the exchange),
    ``kept`` (a call handed over to the client, the reply not over yet: it joins the exchange all the same),
    ``late`` (answered already: timed out, cancelled, or a second result; ignored), ``not_yours`` (the call is the
    server's: refused, nothing changes) or ``unknown`` (the reply made no such call)."""
    call_id = result.call_id
    if not any(c.call_id == call_id for c in rounds.calls):
        return "unknown"
    if call_id not in rounds.client_calls:
        return "not_yours"
    if answered(rounds, call_id, result.output, result.ok, now):
        return "taken"
    if call_id in rounds.results:
        return "late"
    rounds.results[call_id] = ChatMessage("tool", result.output, call_id=call_id, failed=not result.ok)
    return "kept"


def not_yours(call_id: str) -> list[Effect]:
    """The refusal of a client's result for ``call_id``, a call that only the server answers."""
    why = f"the tool call {call_id[:64]!r} is not yours to answer: a server tool runs it, and only its result counts"
    return [Notify(ErrorNotice(code=NOT_YOUR_CALL, message=why))]


def answered(rounds: ToolRounds, call_id: str, output: str, ok: bool, now: float, timeout: bool = False) -> bool:
    """The result of pending call ``call_id`` came (``ok``), or what went wrong with it: it joins the reply's
    exchange. ``False``: no such call was pending (a late result, after a timeout or an interruption)."""
    pending = rounds.pending.pop(call_id, None)
    if pending is None:
        return False
    outcome: ToolOutcome = "ok" if ok else ("timeout" if timeout else "failed")
    rounds.timings.append(_timing(pending, outcome, now))
    rounds.results[call_id] = ChatMessage("tool", output, call_id=call_id, failed=not ok)
    rounds.failed = rounds.failed or not ok
    return True


def timed_out(rounds: ToolRounds, now: float) -> list[PendingCall]:
    """The calls past their deadline at ``now``, answered as timed out (the model is told so)."""
    late = [p for p in rounds.pending.values() if now >= p.deadline]
    for p in late:
        waited = p.deadline - p.at
        answered(rounds, p.call.call_id, f"the tool did not answer within {waited:g} s", False, now, timeout=True)
    return late


def timeout_effects(turn: int, late: list[PendingCall]) -> list[Effect]:
    """What follows calls that timed out: a server tool's call is stopped, and the client is warned."""
    effects: list[Effect] = [CancelTool(turn, p.call.call_id) for p in late if not p.client]
    for p in late:
        message = f"the tool {p.call.name!r} did not answer within {p.deadline - p.at:g} s"
        effects.append(Notify(ErrorNotice(code="tool_timeout", message=message, turn=turn)))
    return effects


def filler_due(rounds: ToolRounds, policy: ToolPolicy, now: float, *, said: bool) -> bool:
    """The caller should hear the hold phrase now: a call has been pending ``filler_after_ms`` and nothing of the
    reply has been said (a model that said "let me check" has told the caller already)."""
    since = rounds.waited_since
    if since is None or said or not policy.filler_after_ms:
        return False
    return (now - since) * 1000.0 >= policy.filler_after_ms


def next_round(rounds: ToolRounds, policy: ToolPolicy) -> bool | None:
    """After a round that made calls, once they are all answered: ``True`` ask the model again with the results;
    ``False`` the reply ends here (handed to the client, or past the round bound); ``None`` not yet (the model
    is still writing, or a call is pending). Also ``False`` for a round that made no call."""
    if not rounds.round_calls:
        return False
    if not rounds.round_ended or rounds.pending:
        return None
    return not rounds.handed_over and rounds.round <= policy.max_rounds


def begin_round(rounds: ToolRounds, policy: ToolPolicy) -> str:
    """The next round starts; returns the tool choice it is asked with (``none`` past the round bound, so that
    the model answers with what it has)."""
    rounds.round += 1
    rounds.round_calls = 0
    rounds.round_ended = False
    return "none" if rounds.round > policy.max_rounds else policy.choice


def interrupted(rounds: ToolRounds, now: float) -> None:
    """The reply stopped with calls pending: each is answered as cancelled (the history says what happened)."""
    for call_id, pending in list(rounds.pending.items()):
        del rounds.pending[call_id]
        rounds.timings.append(_timing(pending, "cancelled", now))
        rounds.results[call_id] = ChatMessage("tool", CANCELLED, call_id=call_id, failed=True)


def _timing(pending: PendingCall, outcome: ToolOutcome, now: float) -> ToolTiming:
    return ToolTiming(pending.call.name, round((now - pending.at) * 1000.0, 1), outcome, pending.client, pending.at)
