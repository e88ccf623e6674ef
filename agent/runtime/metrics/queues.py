"""The model queues on ``/metrics`` (local models, a remote voice endpoint): depth, running jobs, waits, drops,
and admission's signal.

Reason to change: what ``QueueStats`` reports, or how it is exposed.
"""

from __future__ import annotations

from agent.runtime.metrics.registry import Counter, Gauge, Registry
from agent.work.scheduling import QueueStats


class ModelQueueMetrics:
    """Registered on the server's registry; ``update`` takes ``Components.queue_stats()`` at each scrape."""

    def __init__(self, r: Registry) -> None:
        self.queue_depth = r.register(
            Gauge(
                "voice_agent_model_queue_depth",
                "Model jobs waiting for a worker or an endpoint slot, by model (asr, tts, or the voice endpoint).",
                ["model"],
            )
        )
        self.running = r.register(Gauge("voice_agent_model_running", "Model jobs running now, by model.", ["model"]))
        self.jobs_total = r.register(
            Counter("voice_agent_model_jobs_total", "Model jobs started, by model.", ["model"])
        )
        self.dropped_total = r.register(
            Counter(
                "voice_agent_model_dropped_total",
                "Speculative or quick transcripts not run because the server was busy, by model.",
                ["model"],
            )
        )
        self.wait_seconds_total = r.register(
            Counter(
                "voice_agent_model_wait_seconds_total",
                "Time jobs waited for a worker before starting, by model (divide by jobs_total for the mean).",
                ["model"],
            )
        )
        self.cpu_seconds_total = r.register(
            Counter(
                "voice_agent_model_cpu_seconds_total",
                "CPU time of the worker threads running the model's jobs, by model: what the work cost, not what it "
                "waited. Work a model hands to threads of its own is not counted: faster-whisper's (asr) is mostly "
                "that; the ONNX models on one thread (smart_turn, text_turn, Piper's tts) are counted whole.",
                ["model"],
            )
        )
        self.last_wait = r.register(
            Gauge("voice_agent_model_last_wait_seconds", "Wait of the job that started last, by model.", ["model"])
        )
        self.first_audio_wait = r.register(
            Gauge(
                "voice_agent_first_audio_wait_seconds",
                "Estimated wait for the models before a new caller's first sentence could start, behind the "
                "work queued and running and one turn for every caller speaking now (admission refuses new calls "
                "as busy above AGENT_SERVER__ADMISSION_WAIT_MS).",
            )
        )
        self.turn_cost = r.register(
            Gauge(
                "voice_agent_turn_first_audio_work_seconds",
                "One turn's first-audio model work (a transcript and a first sentence) as it has cost lately.",
            )
        )

    def update(self, stats: QueueStats) -> None:
        self.first_audio_wait.set(stats.first_audio_wait_s)
        self.turn_cost.set(stats.turn_cost_s)
        for model, s in stats.models.items():
            labels = [model]
            self.queue_depth.set(s.queued, labels)
            self.running.set(s.running, labels)
            self.last_wait.set(s.last_wait_s, labels)
            for counter, value in (
                (self.jobs_total, s.started),
                (self.dropped_total, s.dropped),
                (self.wait_seconds_total, s.wait_s_total),
                (self.cpu_seconds_total, s.cpu_s_total),
            ):
                counter.inc(max(0.0, value - counter.value(labels)), labels)
