"""Who may answer a tool call, in the core on a simulated clock (issue 37): a server tool's result comes only from
the tool runner (``ToolDone``), a client's only from that client (``ToolResult``); a client's result for any other
call is refused (``not_your_call``) and changes nothing, while the reply waits and after it is over. Also: a call
id the model repeats is renamed with the session's secret, not ``<id>-<n>``; a failed result is said once."""

from __future__ import annotations

import re

from agent.adapters.openai_chat_wire import chat_messages
from agent.config import Settings
from agent.core.events import (
    CreateResponse,
    Effect,
    ErrorNotice,
    GenerateReply,
    ReplyDelta,
    ReplyEnded,
    ReplyToolCall,
    RunTool,
    SpeechAudio,
    SpeechEnded,
    Tick,
    ToolCalled,
    ToolDone,
    ToolOutputAdded,
    ToolResult,
    TurnMetrics,
)
from agent.core.policies import ToolPolicy
from agent.ports import ChatMessage, ToolCall, ToolSpec
from agent.runtime.call.policies import session_config
from tests.session_driver import AUDIO_100MS, Driver, events, of
from tests.unit.test_tool_rounds import APP, LOOKUP, PHRASES, WEATHER, asked

SERVER = ToolCall("call_srv_1", "get_weather", '{"city": "Paris"}')
CLIENT = ToolCall("call_app_1", "show_map", '{"city": "Paris"}')


def driver(key: str = "k3y", **policy: object) -> Driver:
    tools = ToolPolicy(specs=(WEATHER, LOOKUP, APP), call_id_key=key, **policy)  # type: ignore[arg-type]
    return Driver(tools=tools, phrases=PHRASES)


def refusal(effects: list[Effect], code: str) -> ErrorNotice:
    """The one ``ErrorNotice`` among ``effects``: a refusal of a client's request, with ``code``."""
    (error,) = of(effects, ErrorNotice)
    assert isinstance(error, ErrorNotice) and error.code == code and error.turn is None
    return error


def spoken_and_over(d: Driver, turn: int, text: str = "It is sunny.") -> None:
    """Turn ``turn``'s last round says ``text``, which is synthesized and played out: the turn is over."""
    d.at(0.1, ReplyDelta(turn, text))
    d.at(0.0, ReplyEnded(turn))
    d.at(0.01, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.01, SpeechEnded(turn))
    assert of(d.at(1.0, Tick()), TurnMetrics) and d.session.active_turn is None


def test_a_forged_result_for_a_pending_server_call_is_refused_and_the_real_one_is_taken() -> None:
    d = driver()
    turn = asked(d)
    assert of(d.at(0.1, ReplyToolCall(turn, SERVER)), RunTool) == [RunTool(turn, SERVER)]
    d.at(0.0, ReplyEnded(turn))
    forged = d.at(0.2, ToolResult("call_srv_1", "FORGED"))
    error = refusal(forged, "not_your_call")
    assert "'call_srv_1'" in error.message and "server" in error.message
    assert of(forged, GenerateReply) == []  # the reply still waits on the tool
    (again,) = of(d.at(0.3, ToolDone(turn, "call_srv_1", '{"sky": "sunny"}')), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", '{"sky": "sunny"}', call_id="call_srv_1")
    assert all("FORGED" not in m.text for m in again.history)
    spoken_and_over(d, turn)
    assert [m.text for m in d.session.history.snapshot() if m.role == "tool"] == ['{"sky": "sunny"}']


def test_a_forged_error_for_a_pending_server_call_is_refused_too() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, SERVER))
    refusal(d.at(0.1, ToolResult("call_srv_1", "the tool is down", ok=False)), "not_your_call")
    assert of(d.at(0.1, ToolDone(turn, "call_srv_1", "sunny")), GenerateReply) == []  # the model is still writing
    (again,) = of(d.at(0.0, ReplyEnded(turn)), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "sunny", call_id="call_srv_1")


def test_a_forged_result_for_a_finished_server_call_is_refused_on_the_realtime_path() -> None:
    d = driver(client_waits=False)
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, SERVER))
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(0.2, ToolDone(turn, "call_srv_1", "sunny")), GenerateReply)
    spoken_and_over(d, turn)
    before = d.session.history.snapshot()
    error = refusal(d.at(0.1, ToolResult("call_srv_1", "FORGED")), "not_your_call")
    assert "'call_srv_1'" in error.message
    assert d.session.history.snapshot() == before
    (ask,) = of(d.at(0.1, CreateResponse()), GenerateReply)
    assert all("FORGED" not in m.text for m in ask.history)


def test_a_server_call_whose_result_never_came_cannot_be_answered_by_the_client_after_the_reply() -> None:
    d = driver(client_waits=False)
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, SERVER))
    d.at(0.0, ReplyEnded(turn))
    d.audio("S" * 32)  # the caller talks over the wait: the call is cancelled, the history says so
    before = d.session.history.snapshot()
    refusal(d.at(0.1, ToolResult("call_srv_1", "FORGED")), "not_your_call")
    assert d.session.history.snapshot() == before


def test_a_call_the_server_answered_itself_is_not_the_clients_even_when_named_like_a_client_tool() -> None:
    d = driver(max_rounds=1)
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, ToolCall("c1", "get_weather")))
    d.at(0.0, ReplyEnded(turn))
    d.at(0.1, ToolDone(turn, "c1", "sunny"))
    late = ToolCall("c2", "show_map")  # past the round bound: answered by the server with an error, never sent
    assert events(d.at(0.1, ReplyToolCall(turn, late))) == []
    refusal(d.at(0.1, ToolResult("c2", "shown")), "not_your_call")


def test_a_clients_own_result_still_works_while_the_reply_waits_and_after_it() -> None:
    d = driver()
    turn = asked(d)
    assert events(d.at(0.1, ReplyToolCall(turn, CLIENT))) == [ToolCalled(turn, CLIENT)]
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(0.4, ToolResult("call_app_1", "shown")), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "shown", call_id="call_app_1")
    assert d.at(0.1, ToolResult("call_app_1", "again")) == []  # answered already: ignored, as before

    rt = driver(client_waits=False)
    turn = asked(rt)
    rt.at(0.1, ReplyToolCall(turn, CLIENT))
    rt.at(0.0, ReplyEnded(turn))
    rt.at(0.01, SpeechEnded(turn))
    rt.at(0.5, Tick())
    effects = rt.at(1.0, ToolResult("call_app_1", "shown"))
    assert events(effects) == [ToolOutputAdded(turn, "call_app_1", "shown")]


def test_a_client_answers_its_call_even_when_an_earlier_server_call_had_the_same_id() -> None:
    d = driver(client_waits=False)
    first = asked(d)
    d.at(0.1, ReplyToolCall(first, ToolCall("call_1", "get_weather")))
    d.at(0.0, ReplyEnded(first))
    d.at(0.1, ToolDone(first, "call_1", "sunny"))
    spoken_and_over(d, first)
    second = asked(d, "Show me Paris.")
    d.at(0.1, ReplyToolCall(second, ToolCall("call_1", "show_map")))  # the model used the id again
    d.at(0.0, ReplyEnded(second))
    d.at(0.01, SpeechEnded(second))
    d.at(0.5, Tick())
    assert events(d.at(0.1, ToolResult("call_1", "shown"))) == [ToolOutputAdded(second, "call_1", "shown")]
    tools = [m for m in d.session.history.snapshot() if m.role == "tool"]
    assert [m.text for m in tools] == ["sunny", "shown"]


def test_a_clients_result_for_a_handed_over_call_of_a_reply_still_playing_joins_it() -> None:
    d = driver(client_waits=False)
    turn = asked(d)
    d.at(0.1, ReplyDelta(turn, "Here is the map."))
    d.at(0.0, ReplyToolCall(turn, CLIENT))
    d.at(0.0, ReplyEnded(turn))
    d.at(0.01, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.01, SpeechEnded(turn))
    assert d.session.active_turn == turn  # its audio still plays
    assert events(d.at(0.01, ToolResult("call_app_1", "shown"))) == [ToolOutputAdded(turn, "call_app_1", "shown")]
    d.at(1.0, Tick())
    *_, call, result = d.session.history.snapshot()
    assert call.calls == (CLIENT,) and result == ChatMessage("tool", "shown", call_id="call_app_1")


def test_a_result_for_a_call_never_made_is_refused_as_unknown_and_changes_nothing() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, SERVER))
    effects = d.at(0.1, ToolResult("call_nope", "x"))
    refusal(effects, "unknown_call")
    assert of(d.at(0.1, ToolDone(turn, "call_srv_1", "sunny")), GenerateReply) == []  # still writing
    (again,) = of(d.at(0.0, ReplyEnded(turn)), GenerateReply)
    assert again.history[-1].text == "sunny"


def test_a_repeated_call_id_is_renamed_with_the_sessions_secret_not_a_counter() -> None:
    renamed: list[str] = []
    for key in ("one secret", "one secret", "another secret"):
        d = driver(key)
        turn = asked(d)
        d.at(0.1, ReplyToolCall(turn, SERVER))
        (run,) = of(d.at(0.0, ReplyToolCall(turn, SERVER)), RunTool)
        renamed.append(run.call.call_id)
    assert renamed[0] == renamed[1] != renamed[2]  # the same session's secret gives the same id (a replay)
    for call_id in renamed:
        assert call_id != "call_srv_1-1" and not call_id.startswith("call_srv_1")
        assert re.fullmatch(r"call_[0-9a-f]{24}", call_id)


def test_each_session_draws_its_own_secret_for_renaming() -> None:
    keys = {session_config(Settings(), 24000, language="en").tools.call_id_key for _ in range(2)}
    assert len(keys) == 2 and all(re.fullmatch(r"[0-9a-f]{32}", key) for key in keys)
    assert "call_id_key" not in repr(session_config(Settings(), 24000, language="en"))  # never in a log line


def test_a_renamed_client_call_says_nothing_of_the_next_renamed_id() -> None:
    d = driver()
    turn = asked(d)
    seen = [d.at(0.1, ReplyToolCall(turn, CLIENT)), d.at(0.0, ReplyToolCall(turn, CLIENT))]
    (shown,) = events(seen[1])
    run = of(d.at(0.0, ReplyToolCall(turn, ToolCall("call_app_1", "get_weather"))), RunTool)[0]
    assert shown.call.call_id != run.call.call_id  # neither follows from the other without the secret
    refusal(d.at(0.1, ToolResult(run.call.call_id, "FORGED")), "not_your_call")


def test_a_failed_result_reaches_an_openai_model_with_one_error_prefix() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, SERVER))
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(0.1, ToolDone(turn, "call_srv_1", "HTTP 500", ok=False, code="tool_failed")), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "HTTP 500", call_id="call_srv_1", failed=True)
    assert chat_messages(again.history)[-1]["content"] == "error: HTTP 500"

    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CLIENT))
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(0.1, ToolResult("call_app_1", "no such city", ok=False)), GenerateReply)
    assert chat_messages(again.history)[-1]["content"] == "error: no such city"


def test_a_timed_out_or_unknown_tool_is_told_once_as_an_error() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, ToolCall("c9", "delete_everything")))
    (again,) = of(d.at(0.0, ReplyEnded(turn)), GenerateReply)
    told = chat_messages(again.history)[-1]["content"]
    assert told == "error: there is no tool named 'delete_everything'"
    tools = ToolPolicy(specs=(ToolSpec("slow", timeout_s=1.0),), filler_after_ms=0)
    d = Driver(tools=tools, phrases=PHRASES)
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, ToolCall("c", "slow")))
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(1.0, Tick()), GenerateReply)
    assert chat_messages(again.history)[-1]["content"] == "error: the tool did not answer within 1 s"
