"""A turn number started again after its work was cancelled: results of the cancelled run never pass."""

from __future__ import annotations

import asyncio
import logging

from agent.core.events import ReplyDelta, ReplyEnded
from agent.ports import ChatMessage
from agent.runtime.call.turn_tasks import Stamped, TurnTasks
from agent.runtime.components import Components
from agent.work.workers import WorkPool
from tests.integration.conftest import local_settings
from tests.integration.standins import EchoLanguageModel, LoudnessDetector, ScriptedSpeechToText, ToneSpeech


def user(text: str) -> tuple[ChatMessage, ...]:
    return (ChatMessage("user", text),)


async def test_results_of_a_cancelled_run_are_not_fresh_for_the_next_run_of_the_same_turn() -> None:
    pool = WorkPool(1)
    components = Components(
        stt=ScriptedSpeechToText(), llm=EchoLanguageModel(), tts=ToneSpeech(), new_detector=LoudnessDetector, work=pool
    )
    inbox: asyncio.Queue[object] = asyncio.Queue()

    def no_speech(turn: int, post: object) -> object:
        raise AssertionError("no speech in this test")

    log = logging.getLogger("test")
    tasks = TurnTasks(components, local_settings(), inbox.put, no_speech, log)  # type: ignore[arg-type]
    try:
        tasks.reply(1, user("first"), "en", (), "auto")
        first = [await inbox.get(), await inbox.get()]  # the first run posted its whole reply ...
        tasks.cancel_turn(1)  # ... which is then discarded, unread
        tasks.reply(1, user("second"), "en", (), "auto")
        second = [await inbox.get(), await inbox.get()]
        assert all(isinstance(item, Stamped) for item in first + second)
        assert [tasks.fresh(item) for item in first] == [None, None]  # type: ignore[arg-type]
        assert [tasks.fresh(item) for item in second] == [  # type: ignore[arg-type]
            ReplyDelta(1, "You said: second"),
            ReplyEnded(1),
        ]
    finally:
        await tasks.close()
        pool.close()
