"""The core's handling of tool calls on a simulated clock: rounds, the hold phrase at 700 ms, timeouts,
cancellation by barge-in, the round bound, parallel calls, client tools on /ws and on the Realtime path."""

from __future__ import annotations

from agent.core.events import (
    APOLOGY_SENTENCE,
    HOLD_SENTENCE,
    CancelTool,
    CancelTurn,
    CreateResponse,
    ErrorNotice,
    FinishSynthesis,
    GenerateReply,
    ReplyDelta,
    ReplyEnded,
    ReplyText,
    ReplyToolCall,
    RunTool,
    SpeechAudio,
    SpeechEnded,
    Synthesize,
    Tick,
    ToolCalled,
    ToolDone,
    ToolOutputAdded,
    ToolResult,
    TranscriptReady,
    TurnMetrics,
)
from agent.core.history import Dialogue
from agent.core.policies import Deadlines, Phrases, ToolPolicy
from agent.ports import ChatMessage, ToolCall, ToolSpec
from tests.session_driver import AUDIO_100MS, Driver, events, of, requests, utter

WEATHER = ToolSpec("get_weather", "The weather in a city", timeout_s=2.0)
LOOKUP = ToolSpec("lookup_order", "An order's status", timeout_s=2.0)
APP = ToolSpec("show_map", "Shows a map in the app", runs_on="client", timeout_s=5.0)
CALL = ToolCall("call_1", "get_weather", '{"city": "Paris"}')
PHRASES = Phrases(apology="Sorry, something went wrong.", hold="One moment.")


def asked(d: Driver, text: str = "What is the weather in Paris?") -> int:
    """A caller turn transcribed: returns its number (the first round has been asked for)."""
    (req,) = requests(utter(d))
    effects = d.at(0.1, TranscriptReady(req, text, language="en"))
    (ask,) = of(effects, GenerateReply)
    assert ask.tools == d.session.config.tools.specs and ask.tool_choice == "auto"
    turn = d.session.active_turn
    assert turn is not None
    return turn


def driver(**policy: object) -> Driver:
    tools = ToolPolicy(specs=(WEATHER, LOOKUP, APP), **policy)  # type: ignore[arg-type]
    return Driver(tools=tools, phrases=PHRASES)


def test_a_server_tool_runs_and_the_next_round_is_asked_with_its_result() -> None:
    d = driver()
    turn = asked(d)
    assert of(d.at(0.2, ReplyToolCall(turn, CALL)), RunTool) == [RunTool(turn, CALL)]
    ended = d.at(0.01, ReplyEnded(turn))
    assert of(ended, FinishSynthesis) == [] and of(ended, GenerateReply) == []  # it waits on the tool
    (second,) = of(d.at(0.3, ToolDone(turn, "call_1", '{"sky": "sunny"}')), GenerateReply)
    *_, user, call, result = second.history
    assert user == ChatMessage("user", "What is the weather in Paris?")
    assert call == ChatMessage("assistant", "", (CALL,))
    assert result == ChatMessage("tool", '{"sky": "sunny"}', call_id="call_1")
    d.at(0.1, ReplyDelta(turn, "It is sunny in Paris."))
    assert FinishSynthesis(turn) in d.at(0.01, ReplyEnded(turn))
    d.at(0.05, SpeechAudio(turn, AUDIO_100MS, 0))
    d.at(0.01, SpeechEnded(turn))
    (metrics,) = of(d.at(1.0, Tick()), TurnMetrics)
    assert [(t.name, t.ms, t.outcome) for t in metrics.tools] == [("get_weather", 310.0, "ok")]
    kept = d.session.history.snapshot()[-3:]
    assert [m.role for m in kept] == ["user", "assistant", "tool"]
    assert kept[1] == ChatMessage("assistant", "It is sunny in Paris.", (CALL,))


def test_the_hold_phrase_plays_once_when_a_tool_takes_700_ms_and_nothing_was_said() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(0.69, Tick()), Synthesize) == []
    (hold,) = of(d.at(0.01, Tick()), Synthesize)
    assert (hold.text, hold.sentence, hold.phrase) == ("One moment.", HOLD_SENTENCE, "hold")
    assert of(d.at(0.5, Tick()), Synthesize) == []  # once per reply


def test_no_hold_phrase_when_the_model_already_said_something() -> None:
    d = driver()
    turn = asked(d)
    said = d.at(0.1, ReplyDelta(turn, "Let me check that for you."))
    d.at(0.0, ReplyToolCall(turn, CALL))
    ended = d.at(0.0, ReplyEnded(turn))
    spoken = [s.text for s in of(said + ended, Synthesize)]
    assert spoken == ["Let me check that for you."]
    assert of(d.at(1.5, Tick()), Synthesize) == []


def test_the_hold_phrase_can_be_turned_off() -> None:
    d = driver(filler_after_ms=0)
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(1.5, Tick()), Synthesize) == []


def test_a_tool_that_times_out_is_stopped_and_the_model_is_told() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(1.9, Tick()), CancelTool) == []
    effects = d.at(0.1, Tick())
    assert CancelTool(turn, "call_1") in effects
    (error,) = of(effects, ErrorNotice)
    assert error.code == "tool_timeout" and error.turn == turn
    (again,) = of(effects, GenerateReply)
    told = again.history[-1]
    assert told.role == "tool" and told.failed and "did not answer within 2 s" in told.text
    assert d.at(0.1, ToolDone(turn, "call_1", "too late")) == []  # a late result changes nothing
    d.at(0.1, ReplyDelta(turn, "Sorry, the weather service is not answering."))
    assert FinishSynthesis(turn) in d.at(0.0, ReplyEnded(turn))


def test_a_failed_tool_and_a_model_that_says_nothing_get_the_apology() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(0.1, ToolDone(turn, "call_1", "HTTP 500", ok=False, code="tool_failed")), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "HTTP 500", call_id="call_1", failed=True)  # the wire says "error"
    effects = d.at(0.2, ReplyEnded(turn))
    (apology,) = of(effects, Synthesize)
    assert (apology.sentence, apology.phrase) == (APOLOGY_SENTENCE, "apology")
    assert ReplyText(turn, "Sorry, something went wrong.", done=True) in events(effects)


def test_barge_in_during_a_tool_call_cancels_the_reply_and_the_history_says_so() -> None:
    d = driver()
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    effects = d.audio("S" * 32)  # the caller talks over the wait long enough to take the floor
    assert CancelTurn(turn) in effects
    (metrics,) = of(effects, TurnMetrics)
    assert [t.outcome for t in metrics.tools] == ["cancelled"]
    call, result = d.session.history.snapshot()[-2:]
    assert call.calls == (CALL,)
    assert result.role == "tool" and result.failed and "cancelled" in result.text
    assert d.at(0.1, ToolDone(turn, "call_1", "sunny")) == []  # the stale result is dropped


def test_parallel_calls_run_at_once_and_the_reply_waits_for_all() -> None:
    d = driver()
    turn = asked(d)
    order = ToolCall("call_2", "lookup_order", '{"id": "A1"}')
    effects = d.at(0.1, ReplyToolCall(turn, CALL)) + d.at(0.0, ReplyToolCall(turn, order))
    assert of(effects, RunTool) == [RunTool(turn, CALL), RunTool(turn, order)]
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(0.2, ToolDone(turn, "call_2", "shipped")), GenerateReply) == []
    (again,) = of(d.at(0.1, ToolDone(turn, "call_1", "sunny")), GenerateReply)
    assert again.history[-3] == ChatMessage("assistant", "", (CALL, order))
    assert [m.call_id for m in again.history[-2:]] == ["call_1", "call_2"]  # results in call order


def test_the_round_bound_stops_a_model_that_keeps_calling() -> None:
    d = driver(max_rounds=2)
    turn = asked(d)
    for n in range(2):
        call = ToolCall(f"call_{n}", "get_weather", "{}")
        assert of(d.at(0.1, ReplyToolCall(turn, call)), RunTool) == [RunTool(turn, call)]
        d.at(0.0, ReplyEnded(turn))
        (ask,) = of(d.at(0.1, ToolDone(turn, call.call_id, "sunny")), GenerateReply)
    assert ask.tool_choice == "none"  # the third round may only answer
    extra = ToolCall("call_9", "get_weather", "{}")
    assert of(d.at(0.1, ReplyToolCall(turn, extra)), RunTool) == []
    effects = d.at(0.0, ReplyEnded(turn))
    assert of(effects, GenerateReply) == [] and FinishSynthesis(turn) in effects


def test_an_unknown_tool_is_not_run_and_the_model_is_told() -> None:
    d = driver()
    turn = asked(d)
    wrong = ToolCall("call_1", "delete_everything", "{}")
    assert of(d.at(0.1, ReplyToolCall(turn, wrong)), RunTool) == []
    (again,) = of(d.at(0.0, ReplyEnded(turn)), GenerateReply)
    assert again.history[-1].failed and "no tool named 'delete_everything'" in again.history[-1].text


def test_a_clients_tool_on_ws_is_sent_to_it_and_its_result_lets_the_reply_go_on() -> None:
    d = driver()
    turn = asked(d)
    call = ToolCall("call_7", "show_map", '{"city": "Paris"}')
    effects = d.at(0.1, ReplyToolCall(turn, call))
    assert events(effects) == [ToolCalled(turn, call)] and of(effects, RunTool) == []
    d.at(0.0, ReplyEnded(turn))
    (again,) = of(d.at(0.4, ToolResult("call_7", "shown")), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "shown", call_id="call_7")
    (unknown,) = of(d.at(0.1, ToolResult("call_nope", "x")), ErrorNotice)
    assert unknown.code == "unknown_call"


def test_the_model_deadline_does_not_run_while_a_tool_is_pending() -> None:
    tools = ToolPolicy(specs=(ToolSpec("slow", timeout_s=8.0),), filler_after_ms=0)
    d = Driver(tools=tools, phrases=PHRASES, deadlines=Deadlines(first_text_s=3.0))
    turn = asked(d)
    d.at(0.1, ReplyToolCall(turn, ToolCall("c", "slow")))
    d.at(0.0, ReplyEnded(turn))
    assert of(d.at(5.0, Tick()), ErrorNotice) == []  # 5 s without text: the tool, not the model, is waited on
    assert of(d.at(1.0, ToolDone(turn, "c", "done")), GenerateReply)
    (late,) = of(d.at(3.0, Tick()), ErrorNotice)  # the new round's own deadline counts from its request
    assert late.code == "llm_timeout"


def test_on_the_realtime_path_the_reply_ends_with_the_call_and_the_result_joins_the_conversation() -> None:
    d = driver(client_waits=False)
    turn = asked(d)
    call = ToolCall("call_rt", "show_map", '{"city": "Paris"}')
    assert events(d.at(0.1, ReplyToolCall(turn, call))) == [ToolCalled(turn, call)]
    ended = d.at(0.0, ReplyEnded(turn))
    assert ReplyText(turn, "", done=True) in events(ended) and FinishSynthesis(turn) in ended
    (metrics,) = of(d.at(0.01, SpeechEnded(turn)) + d.at(0.5, Tick()), TurnMetrics)
    assert metrics.tools == ()  # the client runs it outside the reply
    effects = d.at(1.0, ToolResult("call_rt", '{"shown": true}'))
    assert events(effects) == [ToolOutputAdded(turn, "call_rt", '{"shown": true}')]
    assert d.at(0.1, ToolResult("call_rt", "again")) == []  # answered already
    (ask,) = of(d.at(0.1, CreateResponse()), GenerateReply)
    assert ask.history[-2:] == (
        ChatMessage("assistant", "", (call,)),
        ChatMessage("tool", '{"shown": true}', call_id="call_rt"),
    )


def test_a_dialogue_never_starts_with_a_result_whose_call_was_dropped() -> None:
    dialogue = Dialogue("sys", max_messages=3)
    dialogue.add("user", "weather?", 1)
    dialogue.add_message(ChatMessage("assistant", "", (CALL,)), 1)
    dialogue.add_message(ChatMessage("tool", "sunny", call_id="call_1"), 1)
    dialogue.add("user", "thanks", 2)  # four messages: the call goes, and its result with it
    assert [m.role for m in dialogue.snapshot()] == ["system", "user"]
    assert dialogue.find_call("call_1") is None


def prepared(text: str = "What is the weather in Paris?") -> tuple[Driver, int]:
    """A reply prepared from the speculative transcript (preemption), before the end of turn."""
    d = Driver(speculative_ms=100, preemption="llm+tts", tools=ToolPolicy(specs=(WEATHER,)), phrases=PHRASES)
    (spec,) = requests(d.audio("S" * 10 + "." * 5))
    (ask,) = of(d.at(0.0, TranscriptReady(spec, text, language="en")), GenerateReply)
    assert d.session.active_turn is None
    return d, ask.turn


def test_a_prepared_reply_runs_no_tool_before_the_end_of_turn_and_runs_it_once_released() -> None:
    d, turn = prepared()
    ahead = d.at(0.01, ReplyToolCall(turn, CALL)) + d.at(0.0, ReplyEnded(turn))
    assert of(ahead, RunTool) == []  # a guess must not act: the tool might book a table
    released = d.audio(".....")  # the turn ends as guessed
    assert of(released, RunTool) == [RunTool(turn, CALL)]
    (again,) = of(d.at(0.1, ToolDone(turn, "call_1", "sunny")), GenerateReply)
    assert again.history[-3].text == "What is the weather in Paris?" and again.history[-1].text == "sunny"


def test_a_prepared_reply_the_caller_talks_past_never_runs_its_tool() -> None:
    d, turn = prepared()
    d.at(0.01, ReplyToolCall(turn, CALL))
    d.at(0.0, ReplyEnded(turn))
    effects = d.audio("S" * 10 + "." * 25)  # the caller goes on: the guess is discarded
    assert CancelTurn(turn) in effects and of(effects, RunTool) == []


def test_a_prepared_replys_tool_has_its_whole_time_once_released_and_no_hold_phrase_at_once() -> None:
    # The call was made early in a long pause (here 2.5 s before the end of turn, longer than the tool's 2 s and the
    # 700 ms before the hold phrase); the tool runs only from the release, so its time and the phrase count from there.
    d, turn = prepared()
    d.at(0.01, ReplyToolCall(turn, CALL))
    d.at(2.5, ReplyEnded(turn))  # the caller is still silent; the end of turn has not come yet
    released = d.audio(".....")
    assert of(released, RunTool) == [RunTool(turn, CALL)]
    effects = released + d.at(0.25, Tick())
    assert not of(effects, ErrorNotice) and not of(effects, CancelTool), effects  # not timed out at once
    assert not [e for e in events(effects) if isinstance(e, ReplyText)]  # no "One moment." at once either
    (again,) = of(d.at(0.5, ToolDone(turn, "call_1", "sunny")), GenerateReply)
    assert again.history[-1] == ChatMessage("tool", "sunny", call_id="call_1")
