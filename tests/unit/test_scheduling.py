"""The scheduling policy, driven synchronously: no threads, no event loop, time passed in."""

from __future__ import annotations

import pytest

from agent.ports import JobInfo, Work
from agent.work.scheduling import Dropped, Job, Scheduler, merge

FIRST = JobInfo(Work.FIRST_SENTENCE)
FINAL = JobInfo(Work.FINAL_TRANSCRIPT)


def later(slack_s: float) -> JobInfo:
    return JobInfo(Work.LATER_SENTENCE, slack_s)


def run_all(scheduler: Scheduler[str], now: float) -> list[str]:
    order = []
    while (job := scheduler.next(now)) is not None:
        order.append(job.payload)
        scheduler.finish(job, now)
    return order


def test_first_audio_runs_before_slack_work_that_arrived_earlier() -> None:
    scheduler: Scheduler[str] = Scheduler(1, {"tts": 0.01})
    scheduler.submit("tts", later(3.0), "A2", 50, now=0.0)
    scheduler.submit("tts", later(6.0), "A3", 50, now=0.0)
    scheduler.submit("tts", FIRST, "B1", 50, now=0.1)
    scheduler.submit("asr", FINAL, "C-final", 2, now=0.2)
    assert run_all(scheduler, now=0.3) == ["C-final", "B1", "A2", "A3"]  # a transcript is end-of-turn work


def test_end_of_turn_work_runs_before_first_audio_that_arrived_earlier() -> None:
    # Three callers: one's reply is ready to be spoken; two others have paused, and their end of turn waits on a
    # speculative transcript and on the scores of their pause. Those go first: the reply's first sentence waits
    # the few tens of milliseconds they cost, where a turn judged without them could cut a caller off.
    scheduler: Scheduler[str] = Scheduler(1, {"tts": 0.002, "asr": 0.1, "turn": 0.01})
    scheduler.submit("tts", FIRST, "A-first", 100, now=0.0)
    scheduler.submit("asr", JobInfo(Work.SPECULATIVE_TRANSCRIPT, 0.3), "B-spec", 2, now=0.1)
    scheduler.submit("turn", JobInfo(Work.TURN_SCORE, 0.2, drop_after_s=1.0), "B-sound", 1, now=0.1)
    scheduler.submit("asr", FINAL, "C-final", 2, now=0.2)
    scheduler.submit("turn", JobInfo(Work.TURN_SCORE, 0.2, drop_after_s=1.0), "B-words", 1, now=0.25)
    # Among themselves by deadline: B-spec and C-final are due at 0.2 s, the scores by 0.29 and 0.44 s.
    assert run_all(scheduler, now=0.3) == ["B-spec", "C-final", "B-sound", "B-words", "A-first"]


def test_slack_work_runs_by_deadline_and_an_overdue_one_joins_the_first_tier() -> None:
    scheduler: Scheduler[str] = Scheduler(1)
    scheduler.submit("tts", later(5.0), "late", 10, now=0.0)
    scheduler.submit("tts", later(1.0), "soon", 10, now=0.0)
    scheduler.submit("tts", FIRST, "first", 10, now=1.5)  # deadline 1.5
    # At 2.0 "soon" (deadline 1.0) is overdue: a gap in someone's playback, earlier than "first".
    assert run_all(scheduler, now=2.0) == ["soon", "first", "late"]


def test_first_audio_jobs_run_in_deadline_order() -> None:
    scheduler: Scheduler[str] = Scheduler(1)
    scheduler.submit("tts", FIRST, "b", 10, now=0.2)
    scheduler.submit("tts", FIRST, "a", 10, now=0.1)
    scheduler.submit("tts", JobInfo(Work.PHRASE), "c", 10, now=0.3)
    assert run_all(scheduler, now=1.0) == ["a", "b", "c"]


def test_at_most_capacity_jobs_run_at_once() -> None:
    scheduler: Scheduler[str] = Scheduler(2)
    for name in "abc":
        scheduler.submit("tts", FIRST, name, 10, now=0.0)
    first, second = scheduler.next(0.0), scheduler.next(0.0)
    assert first is not None and second is not None
    assert scheduler.next(0.0) is None
    scheduler.finish(first, 0.1)
    third = scheduler.next(0.1)
    assert third is not None and third.payload == "c"


def test_speculative_work_is_dropped_when_it_could_not_start_within_its_slack() -> None:
    scheduler: Scheduler[str] = Scheduler(1, {"asr": 0.2, "tts": 0.002})
    speculative = JobInfo(Work.SPECULATIVE_TRANSCRIPT, 0.3)
    # Idle: taken.
    scheduler.submit("asr", speculative, "spec-idle", 1.0, now=0.0)
    assert run_all(scheduler, now=0.0) == ["spec-idle"]
    # Busy: one final transcript running (0.4 s left) and two first sentences queued (0.2 s each).
    running = scheduler.submit("asr", FINAL, "final", 2.0, now=1.0)
    assert scheduler.next(1.0) is running
    scheduler.submit("tts", FIRST, "b1", 100, now=1.0)
    scheduler.submit("tts", FIRST, "c1", 100, now=1.0)
    with pytest.raises(Dropped):
        scheduler.submit("asr", speculative, "spec-busy", 1.0, now=1.0)
    with pytest.raises(Dropped):
        scheduler.submit("asr", JobInfo(Work.QUICK_TRANSCRIPT, 0.1), "quick", 0.5, now=1.0)
    # Later sentences are never dropped, only delayed.
    scheduler.submit("tts", later(0.1), "a2", 100, now=1.0)
    stats = scheduler.stats(1.0)
    assert stats.models["asr"].dropped == 2
    assert stats.models["tts"].queued == 3


def test_a_patient_speculative_transcript_is_kept_and_runs_as_end_of_turn_work() -> None:
    # The server's speculative transcripts may wait past their slack (0.3 s) by up to the admission budget: when
    # the caller stays silent, the queued speculative job is the turn's final transcript, ahead of later work.
    scheduler: Scheduler[str] = Scheduler(1, {"asr": 0.2, "tts": 0.002})
    running = scheduler.submit("asr", FINAL, "final", 2.0, now=1.0)  # 0.4 s
    assert scheduler.next(1.0) is running
    scheduler.submit("tts", FIRST, "b1", 100, now=1.0)
    scheduler.submit("tts", FIRST, "c1", 100, now=1.0)  # 0.8 s of work ahead of a new job in all
    patient = JobInfo(Work.SPECULATIVE_TRANSCRIPT, 0.3, drop_after_s=0.3 + 0.8)
    scheduler.submit("asr", patient, "spec", 1.0, now=1.0)
    with pytest.raises(Dropped):  # past the budget as well: overloaded, dropped
        scheduler.submit("asr", JobInfo(Work.SPECULATIVE_TRANSCRIPT, 0.3, drop_after_s=0.5), "spec-2", 1.0, now=1.0)
    scheduler.submit("tts", later(5.0), "a2", 100, now=1.0)  # a later sentence with slack
    scheduler.finish(running, 1.4)
    # End-of-turn work: it runs first (its turn waits on it), then the first sentences, then the slack sentence.
    assert run_all(scheduler, now=1.4) == ["spec", "b1", "c1", "a2"]
    assert scheduler.stats(1.4).models["asr"].dropped == 1


def test_cancel_removes_a_queued_job() -> None:
    scheduler: Scheduler[str] = Scheduler(1)
    a = scheduler.submit("tts", FIRST, "a", 10, now=0.0)
    b = scheduler.submit("tts", FIRST, "b", 10, now=0.0)
    assert scheduler.cancel(b.id)
    assert not scheduler.cancel(b.id)
    assert run_all(scheduler, now=0.0) == ["a"]
    assert not scheduler.cancel(a.id)  # already ran
    assert scheduler.stats(0.0).models["tts"].queued == 0


def test_the_estimated_wait_for_first_audio_counts_the_work_ahead_of_it() -> None:
    scheduler: Scheduler[str] = Scheduler(2, {"tts": 0.01})
    assert scheduler.stats(0.0).first_audio_wait_s == 0.0
    jobs: list[Job[str]] = [scheduler.submit("tts", FIRST, f"s{i}", 50, now=0.0) for i in range(4)]
    assert scheduler.next(0.0) is jobs[0] and scheduler.next(0.0) is jobs[1]
    # Two running with 0.5 s each, two first sentences queued of 0.5 s each, over two workers; slack work
    # queued does not delay a new first sentence.
    scheduler.submit("tts", later(10.0), "slack", 500, now=0.0)
    assert scheduler.stats(0.0).first_audio_wait_s == pytest.approx(1.0)
    assert scheduler.stats(0.25).first_audio_wait_s == pytest.approx(0.75)


def test_costs_are_learnt_from_the_jobs_that_ran() -> None:
    scheduler: Scheduler[str] = Scheduler(1)
    job = scheduler.submit("asr", FINAL, "x", 2.0, now=0.0)
    assert scheduler.next(0.0) is job
    scheduler.finish(job, 0.4, size=2.0)
    assert scheduler.estimate("asr", 3.0) == pytest.approx(0.6)
    job = scheduler.submit("asr", FINAL, "y", 1.0, now=1.0)
    assert scheduler.next(1.5) is job
    stats = scheduler.stats(1.5).models["asr"]
    assert (stats.started, stats.running) == (2, 1) and stats.last_wait_s == pytest.approx(0.5)


def test_the_compute_of_a_models_jobs_is_summed_apart_from_their_run_time() -> None:
    scheduler: Scheduler[str] = Scheduler(1)
    for name, cpu_s in (("a", 0.03), ("b", 0.05)):
        job = scheduler.submit("smart-turn", FINAL, name, 1.0, now=0.0)
        assert scheduler.next(0.0) is job
        scheduler.finish(job, 0.2, size=1.0, cpu_s=cpu_s)  # ran 200 ms, 30 / 50 ms of it on the CPU
    scheduler.finish(job, 0.3, cpu_s=1.0)  # finished already: not counted twice
    stats = scheduler.stats(0.3).models["smart-turn"]
    assert stats.cpu_s_total == pytest.approx(0.08) and stats.started == 2
    assert scheduler.estimate("smart-turn", 1.0) == pytest.approx(0.2)  # the estimate stays the run time
    assert merge([scheduler.stats(0.3)]).models["smart-turn"].cpu_s_total == pytest.approx(0.08)


def test_several_schedulers_report_as_one_and_a_new_call_waits_for_the_slowest() -> None:
    local: Scheduler[str] = Scheduler(1, {"asr": 1.0})
    remote: Scheduler[str] = Scheduler(1, {"sagemaker": 0.1})
    for scheduler, model in ((local, "asr"), (remote, "sagemaker")):
        scheduler.submit(model, FINAL, "running", 2, now=0.0)
        assert scheduler.next(0.0) is not None
    both = merge([local.stats(0.0), remote.stats(0.0)])
    assert set(both.models) == {"asr", "sagemaker"}
    assert both.first_audio_wait_s == pytest.approx(2.0)
    assert merge([]).first_audio_wait_s == 0.0


def test_a_later_sentence_must_start_its_cost_before_playback_reaches_it() -> None:
    scheduler: Scheduler[str] = Scheduler(1, {"tts": 0.01})
    scheduler.submit("tts", later(1.0), "a2", 80, now=0.0)  # needed in 1 s, costs 0.8 s: start by 0.2 s
    scheduler.submit("tts", FIRST, "b1", 10, now=0.1)
    assert run_all(scheduler, now=0.15) == ["b1", "a2"]
    scheduler.submit("tts", later(1.0), "a3", 80, now=1.0)
    scheduler.submit("tts", FIRST, "c1", 10, now=1.21)
    # Past its latest start (1.2 s) a gap is coming: a3 is first-audio work too, and its deadline is earlier.
    assert run_all(scheduler, now=1.25) == ["a3", "c1"]


def test_callers_admitted_but_not_answered_count_as_a_turn_of_first_audio_work_each() -> None:
    # Ten calls opened in the same second have queued nothing yet, but they will all speak at about the same
    # time: admission must see their first turns coming.
    scheduler: Scheduler[str] = Scheduler(2, {"asr": 0.05, "tts": 0.002}, {"transcript": 0.1, "first_sentence": 0.1})
    assert scheduler.stats(0.0).first_audio_wait_s == 0.0
    assert scheduler.stats(0.0, pending_turns=9).first_audio_wait_s == pytest.approx(9 * 0.2 / 2)
    # What the turns are seen to cost replaces the first guess: a 0.4 s transcript and a 0.2 s first sentence.
    transcript = scheduler.submit("asr", FINAL, "t", 2.0, now=1.0)
    sentence = scheduler.submit("tts", FIRST, "s", 60, now=1.0)
    assert scheduler.next(1.0) is transcript and scheduler.next(1.0) is sentence
    scheduler.finish(sentence, 1.2, 60)
    scheduler.finish(transcript, 1.4, 2.0)
    later_sentence = scheduler.submit("tts", later(10.0), "s2", 60, now=1.4)
    assert scheduler.next(1.4) is later_sentence
    scheduler.finish(later_sentence, 2.4, 60)  # a later sentence is not first-audio work: not counted
    assert scheduler.turn_cost() == pytest.approx(0.6)
    stats = scheduler.stats(2.4, pending_turns=4)
    assert stats.turn_cost_s == pytest.approx(0.6)
    assert stats.first_audio_wait_s == pytest.approx(4 * 0.6 / 2)
