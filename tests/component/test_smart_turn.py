"""Smart Turn (agent/adapters/smart_turn.py): input preparation, the model on real speech, the install step.

The speech is made at test time by the bundled Piper voice (testing.speech); no audio is committed. The model
itself comes from the install step (make: requirements/smart-turn.txt).
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agent.adapters import smart_turn
from agent.adapters.smart_turn import WINDOW, SmartTurn, SmartTurnModel, fit_window, install, log_mel
from agent.errors import ConfigError
from agent.work.workers import WorkPool
from testing.speech import silence, speech_pcm16


def test_fit_window_keeps_the_end_and_pads_the_front() -> None:
    short = np.arange(1, 101, dtype=np.float32)
    fitted = fit_window(short)
    assert fitted.shape == (WINDOW,)
    assert not fitted[: WINDOW - 100].any()
    assert np.array_equal(fitted[-100:], short)
    long = np.arange(WINDOW + 500, dtype=np.float32)
    assert np.array_equal(fit_window(long), long[-WINDOW:])


def test_log_mel_is_whisper_sized_and_normalised() -> None:
    audio = fit_window((0.1 * np.random.default_rng(0).standard_normal(20000)).astype(np.float32))
    features = log_mel(audio)
    assert features.shape == (80, 800)
    assert features.dtype == np.float32
    assert float(features.max()) - float(features.min()) <= 2.0 + 1e-6  # clamped to 8 log10 units, / 4
    with pytest.raises(ValueError):
        log_mel(audio[:-1])


def test_a_missing_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="install"):
        SmartTurnModel(tmp_path / "nothing.onnx")


def _wheel(path: Path, model: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(smart_turn.WHEEL_MEMBER, model)
        archive.writestr("pipecat_ai-0.dist-info/licenses/LICENSE", "BSD 2-Clause License")
    return path


def test_install_refuses_a_model_other_than_the_checked_one(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "pipecat_ai-0-py3-none-any.whl", b"not the model")
    with pytest.raises(ConfigError, match="not the model"):
        install(wheel, tmp_path / "out" / smart_turn.MODEL_FILE)
    assert not (tmp_path / "out" / smart_turn.MODEL_FILE).exists()


def test_install_copies_the_model_and_its_licence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = b"an onnx file"
    monkeypatch.setattr(smart_turn, "MODEL_SHA256", hashlib.sha256(model).hexdigest())
    wheel = _wheel(tmp_path / "pipecat_ai-0-py3-none-any.whl", model)
    target = install(wheel, tmp_path / "out" / smart_turn.MODEL_FILE)
    assert target.read_bytes() == model
    assert (target.parent / "LICENSE.pipecat").read_text().startswith("BSD 2-Clause")


def test_install_refuses_a_wheel_without_the_model(tmp_path: Path) -> None:
    wheel = tmp_path / "other.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("something/else.py", "")
    with pytest.raises(ConfigError, match="has no"):
        install(wheel, tmp_path / "model.onnx")


@pytest.fixture(scope="module")
def model() -> SmartTurnModel:
    return SmartTurnModel()


@pytest.mark.models
def test_the_installed_model_is_the_checked_one() -> None:
    path = smart_turn.default_model_path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == smart_turn.MODEL_SHA256


@pytest.mark.models
def test_a_finished_sentence_sounds_complete(model: SmartTurnModel) -> None:
    # 120-200 ms into the silence, where the core takes its speculative look (docs/benchmarks.md).
    for text in ("Please cancel my order.", "What time do you open tomorrow?"):
        p = model.probability_pcm16(silence(300) + speech_pcm16(text) + silence(150))
        assert p > 0.8, (text, p)


@pytest.mark.models
def test_a_clause_left_hanging_sounds_incomplete(model: SmartTurnModel) -> None:
    for text in ("I can't come tomorrow because", "We missed the train so"):
        p = model.probability_pcm16(silence(300) + speech_pcm16(text) + silence(150))
        assert p < 0.3, (text, p)


@pytest.mark.models
async def test_the_port_runs_the_model_on_the_pool(model: SmartTurnModel) -> None:
    pcm = silence(300) + speech_pcm16("Please cancel my order.") + silence(150)
    pool = WorkPool(1)
    turn = SmartTurn(model, pool)
    try:
        turn.warm_up()
        assert await turn.complete_probability(pcm) == pytest.approx(model.probability_pcm16(pcm), abs=1e-6)
    finally:
        turn.close()
        pool.close()
