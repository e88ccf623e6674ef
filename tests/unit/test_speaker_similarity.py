"""Speaker similarity: the numpy voice encoder's arithmetic on small hand-made weights, the restricted reading of
a PyTorch checkpoint, and the install step. No model: the real weights are tested in
tests/integration/test_speaker_similarity_models.py."""

from __future__ import annotations

import collections
import io
import math
import pickle
import struct
import types
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from faster_whisper.feature_extractor import FeatureExtractor

from agent.adapters.resemblyzer_similarity import (
    WHEEL_MEMBER,
    ResemblyzerSimilarity,
    VoiceEncoder,
    install,
    load_weights,
    read_state_dict,
)
from agent.audio.speaker_embedding import (
    HOP,
    N_FFT,
    SAMPLE_RATE,
    EncoderWeights,
    LstmLayer,
    cosine,
    lstm_last_hidden,
    mel_filters,
    mel_spectrogram,
    normalize_volume,
    partial_embeddings,
    partial_slices,
    speech_mask,
    utterance_embedding,
)
from agent.errors import AudioFormatError, ConfigError

# --- features ---------------------------------------------------------------------------------------------


def test_mel_filters_are_librosas_slaney_filterbank() -> None:
    # faster-whisper carries its own copy of librosa's filters.mel (Slaney scale and norm, 0 Hz to 8 kHz).
    reference = FeatureExtractor.get_mel_filters(SAMPLE_RATE, N_FFT, n_mels=40)
    filters = mel_filters()
    assert filters.shape == (40, N_FFT // 2 + 1) and filters.dtype == np.float32
    np.testing.assert_allclose(filters, reference, rtol=1e-6, atol=1e-9)


def test_mel_spectrogram_is_a_centred_power_stft_through_the_filterbank() -> None:
    rng = np.random.default_rng(1)
    wav = (0.1 * rng.standard_normal(4000)).astype(np.float32)
    mel = mel_spectrogram(wav)
    assert mel.shape == (1 + wav.size // HOP, 40)
    # Frame 7 by hand: the 400 samples centred on sample 7 * 160, a periodic Hann window, |DFT|^2.
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    start = 7 * HOP - N_FFT // 2
    frame = wav[start : start + N_FFT].astype(np.float64) * window
    k = np.arange(N_FFT // 2 + 1)[:, None]
    dft = (frame[None, :] * np.exp(-2j * np.pi * k * np.arange(N_FFT)[None, :] / N_FFT)).sum(axis=1)
    np.testing.assert_allclose(mel[7], mel_filters() @ np.abs(dft) ** 2, rtol=1e-4)
    # The first frame is centred on sample 0: zeros before the clip.
    head = np.concatenate([np.zeros(N_FFT // 2), wav[: N_FFT // 2]]) * window
    np.testing.assert_allclose(mel[0], mel_filters() @ np.abs(np.fft.rfft(head)) ** 2, rtol=1e-4)


def test_a_tone_lands_in_the_band_of_its_frequency() -> None:
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    for hz in (300.0, 1000.0, 4000.0):
        mel = mel_spectrogram((0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32))
        band = int(np.argmax(mel[50]))
        assert band == int(np.argmax(mel_filters()[:, round(hz * N_FFT / SAMPLE_RATE)]))


def test_partial_slices_follow_resemblyzer() -> None:
    # 1.3 partials a second: 77 frames apart; the last one kept when at least 75 % of it holds audio.
    assert partial_slices(16000) == [slice(0, 160)]  # shorter than one partial: one, zero-padded
    assert partial_slices(48000) == [slice(0, 160), slice(77, 237), slice(154, 314)]
    assert partial_slices(40000) == [slice(0, 160), slice(77, 237)]  # a third would be 60 % audio: dropped
    assert partial_slices(0) == [slice(0, 160)]


def test_volume_is_raised_to_minus_30_dbfs_never_lowered() -> None:
    quiet = np.full(1000, 0.001, np.float32)
    raised = normalize_volume(quiet)
    assert 20 * math.log10(float(np.sqrt(np.mean(raised.astype(np.float64) ** 2)))) == pytest.approx(-30.0)
    loud = np.full(1000, 0.5, np.float32)
    assert normalize_volume(loud) is loud
    silent = np.zeros(1000, np.float32)
    assert normalize_volume(silent) is silent


def _mask_by_hand(flags: list[bool]) -> list[bool]:
    """resemblyzer's moving average (width 8, 3 windows before and 4 after, zeros outside) rounded half to even,
    then scipy's binary dilation by 3 windows each side, one window at a time."""
    n = len(flags)
    smooth = []
    for i in range(n):
        total = sum(flags[j] for j in range(i - 3, i + 5) if 0 <= j < n)
        smooth.append(bool(round(total / 8)))
    return [any(smooth[j] for j in range(i - 3, i + 4) if 0 <= j < n) for i in range(n)]


@pytest.mark.parametrize(
    "flags",
    [
        [False] * 30,
        [False] * 10 + [True] * 10 + [False] * 10,
        [True] * 4 + [False] * 20 + [True] * 5 + [False] * 20,
        [True, False] * 15,
        [True] * 3,
    ],
)
def test_speech_mask_smooths_and_dilates(flags: list[bool]) -> None:
    assert speech_mask(np.array(flags)).tolist() == _mask_by_hand(flags)


def test_a_single_voiced_window_is_not_speech_but_a_run_keeps_its_surroundings() -> None:
    lone = speech_mask(np.array([False] * 10 + [True] + [False] * 10))
    assert not lone.any()
    run = speech_mask(np.array([False] * 20 + [True] * 10 + [False] * 20))
    kept = np.flatnonzero(run)
    # The run (20..29) averaged over 8 windows keeps 20..28 (at least 5 of 8 voiced), then 3 more on each side.
    assert (kept[0], kept[-1]) == (17, 31)
    assert speech_mask(np.zeros(0, bool)).size == 0


# --- the network on hand-made weights ---------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_one_unit_lstm_by_hand() -> None:
    # Hidden size 1: gates i, f, g, o are rows 0..3. Input weights 0.5 on each gate, recurrent 0.25, biases.
    w_ih = np.full((4, 1), 0.5, np.float32)
    w_hh = np.full((4, 1), 0.25, np.float32)
    bias = np.array([0.1, -0.2, 0.3, 0.0], np.float32)
    xs = [1.0, -2.0, 0.5]
    h = c = 0.0
    for x in xs:
        pre = [0.5 * x + 0.25 * h + b for b in bias.tolist()]
        i, f, g, o = _sigmoid(pre[0]), _sigmoid(pre[1]), math.tanh(pre[2]), _sigmoid(pre[3])
        c = f * c + i * g
        h = o * math.tanh(c)
    got = lstm_last_hidden(np.array(xs, np.float32).reshape(1, 3, 1), (LstmLayer(w_ih, w_hh, bias),))
    assert got.shape == (1, 1) and float(got[0, 0]) == pytest.approx(h, abs=1e-6)


def _reference_lstm(x: np.ndarray, layers: tuple[LstmLayer, ...]) -> np.ndarray:
    """PyTorch's LSTM equations, one sequence and one unit at a time, in float64."""
    out = []
    for sequence in x.astype(np.float64):
        for layer in layers:
            hidden = layer.w_hh.shape[1]
            h, c = np.zeros(hidden), np.zeros(hidden)
            states = []
            for x_t in sequence:
                z = layer.w_ih.astype(np.float64) @ x_t + layer.w_hh.astype(np.float64) @ h + layer.bias
                i, f = 1 / (1 + np.exp(-z[:hidden])), 1 / (1 + np.exp(-z[hidden : 2 * hidden]))
                g, o = np.tanh(z[2 * hidden : 3 * hidden]), 1 / (1 + np.exp(-z[3 * hidden :]))
                c = f * c + i * g
                h = o * np.tanh(c)
                states.append(h)
            sequence = np.array(states)
        out.append(h)
    return np.array(out)


def _tiny_state(rng: np.random.Generator, hidden: int = 4, layers: int = 2, embed: int = 3) -> dict[str, Any]:
    state: dict[str, Any] = {}
    features = 40
    for n in range(layers):
        state[f"lstm.weight_ih_l{n}"] = rng.normal(0, 0.3, (4 * hidden, features)).astype(np.float32)
        state[f"lstm.weight_hh_l{n}"] = rng.normal(0, 0.3, (4 * hidden, hidden)).astype(np.float32)
        state[f"lstm.bias_ih_l{n}"] = rng.normal(0, 0.1, 4 * hidden).astype(np.float32)
        state[f"lstm.bias_hh_l{n}"] = rng.normal(0, 0.1, 4 * hidden).astype(np.float32)
        features = hidden
    state["linear.weight"] = rng.normal(0, 0.5, (embed, hidden)).astype(np.float32)
    state["linear.bias"] = np.abs(rng.normal(0, 0.1, embed)).astype(np.float32)
    return state


def test_stacked_lstm_matches_the_equations() -> None:
    rng = np.random.default_rng(7)
    weights = EncoderWeights.from_state_dict(_tiny_state(rng))
    x = rng.normal(0, 1, (3, 12, 40)).astype(np.float32)
    np.testing.assert_allclose(lstm_last_hidden(x, weights.layers), _reference_lstm(x, weights.layers), atol=1e-5)


def test_partial_embeddings_are_relu_then_unit_length() -> None:
    rng = np.random.default_rng(3)
    state = _tiny_state(rng)
    state["linear.weight"][0] = 0.0
    state["linear.bias"][0] = -1.0  # always negative: cut to zero by the ReLU
    weights = EncoderWeights.from_state_dict(state)
    mels = np.abs(rng.normal(0, 1, (2, 20, 40))).astype(np.float32)
    embeds = partial_embeddings(mels, weights)
    hidden = _reference_lstm(mels, weights.layers)
    raw = np.maximum(hidden @ state["linear.weight"].T + state["linear.bias"], 0)
    np.testing.assert_allclose(embeds, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-5)
    assert np.all(embeds[:, 0] == 0)


def test_utterance_embedding_is_the_normalised_mean_of_its_partials() -> None:
    rng = np.random.default_rng(5)
    weights = EncoderWeights.from_state_dict(_tiny_state(rng, hidden=3, layers=1))
    wav = (0.1 * rng.standard_normal(48000)).astype(np.float32)
    mel = mel_spectrogram(np.pad(wav, (0, 314 * HOP - wav.size)))
    partials = partial_embeddings(np.stack([mel[s] for s in partial_slices(wav.size)]), weights)
    mean = partials.mean(axis=0)
    np.testing.assert_allclose(utterance_embedding(wav, weights), mean / np.linalg.norm(mean), atol=1e-6)


def test_weights_of_the_wrong_shape_are_refused() -> None:
    state = _tiny_state(np.random.default_rng(0))
    state["lstm.weight_hh_l1"] = state["lstm.weight_hh_l1"][:, :3]
    with pytest.raises(ValueError, match="layer 1"):
        EncoderWeights.from_state_dict(state)
    state = _tiny_state(np.random.default_rng(0))
    del state["linear.bias"]
    with pytest.raises(ValueError, match=r"linear\.bias"):
        EncoderWeights.from_state_dict(state)


def test_cosine() -> None:
    assert cosine([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 1.0]) == pytest.approx(0.0)
    assert cosine([1.0, 1.0], [-1.0, -1.0]) == pytest.approx(-1.0)
    assert cosine([3.0, 4.0], [4.0, 3.0]) == pytest.approx(24 / 25)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError):
        cosine([1.0, 0.0], [1.0, 0.0, 0.0])


# --- reading pretrained.pt --------------------------------------------------------------------------------


class FloatStorage:
    """Stands for ``torch.FloatStorage`` in a checkpoint written here."""


def _rebuild_tensor_v2(*args: object) -> None:
    """Stands for ``torch._utils._rebuild_tensor_v2``."""


class _Tensor:
    def __init__(self, key: str, offset: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.args: tuple[Any, ...] = (("storage", key), offset, shape, stride, False, collections.OrderedDict())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_tensor_v2, self.args)


_NAMES = {FloatStorage: ("torch", "FloatStorage"), _rebuild_tensor_v2: ("torch._utils", "_rebuild_tensor_v2")}


class _TorchPickler(pickle._Pickler):
    """Writes globals under torch's names, and storages as persistent ids, as ``torch.save`` (legacy) does."""

    dispatch: ClassVar[dict[type, Any]] = dict(pickle._Pickler.dispatch)
    # Set up by ``pickle._Pickler`` but not in its stubs.
    write: Callable[[bytes], object]
    memoize: Callable[[object], None]

    def __init__(self, file: io.BytesIO, storages: dict[str, np.ndarray]) -> None:
        super().__init__(file, protocol=2)
        self.storages = storages

    def save_global(self, obj: Any, name: str | None = None) -> None:
        module, qualname = _NAMES.get(obj, (obj.__module__, obj.__qualname__))
        self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
        self.memoize(obj)

    dispatch[types.FunctionType] = save_global

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "storage":
            key = obj[1]
            return ("storage", FloatStorage, key, "cpu", int(self.storages[key].size), None)
        return None


TensorSpec = tuple[str, int, tuple[int, ...], tuple[int, ...]]  # storage key, offset, shape, stride


def legacy_checkpoint(
    state: dict[str, TensorSpec], data: dict[str, Any], optimizer: dict[str, TensorSpec] | None = None
) -> bytes:
    """A file in torch.save's legacy format: magic, version, system info, the checkpoint (``model_state`` and
    ``optimizer_state`` tensors), the storage keys, then each storage (int64 element count, float32 data)."""
    out = io.BytesIO()
    for header in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True}):
        pickle.dump(header, out, protocol=2)
    tensors = collections.OrderedDict((name, _Tensor(*ref)) for name, ref in state.items())
    moments = {name: _Tensor(*ref) for name, ref in (optimizer or {}).items()}
    _TorchPickler(out, data).dump({"step": 1, "model_state": tensors, "optimizer_state": moments})
    keys = list(data)
    pickle.dump(keys, out, protocol=2)
    for key in keys:
        out.write(struct.pack("<q", data[key].size) + data[key].astype("<f4").tobytes())
    return out.getvalue()


def test_a_checkpoint_in_torchs_legacy_format_is_read_with_views_into_shared_storage() -> None:
    flat = np.arange(20, dtype=np.float32)
    blob = legacy_checkpoint(
        {
            "a": ("k1", 0, (2, 3), (3, 1)),
            "b": ("k1", 6, (4,), (1,)),  # a view further into the same storage (cuDNN's flattened weights)
            "t": ("k1", 10, (3, 2), (1, 3)),  # a transposed view
            "c": ("k2", 0, (1,), (1,)),
        },
        {"k1": flat, "k2": np.array([7.5], np.float32), "unused": np.zeros(5, np.float32)},
        {"exp_avg": ("unused", 0, (5,), (1,))},  # read past, not kept
    )
    state = read_state_dict(blob)
    np.testing.assert_array_equal(state["a"], [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(state["b"], [6, 7, 8, 9])
    np.testing.assert_array_equal(state["t"], [[10, 13], [11, 14], [12, 15]])
    assert state["c"].tolist() == [7.5] and all(v.dtype == np.float32 for v in state.values())


def test_a_tensor_reaching_past_its_storage_is_refused() -> None:
    blob = legacy_checkpoint({"a": ("k", 2, (4,), (1,))}, {"k": np.zeros(5, np.float32)})
    with pytest.raises(ConfigError, match="past its storage"):
        read_state_dict(blob)


def test_a_truncated_checkpoint_is_refused() -> None:
    blob = legacy_checkpoint({"a": ("k", 0, (4,), (1,))}, {"k": np.zeros(4, np.float32)})
    with pytest.raises(ConfigError):
        read_state_dict(blob[:-3])


class _Exploit:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        import builtins

        return (builtins.exec, (f"open({str(self.path)!r}, 'w').write('pwned')",))


def test_a_malicious_pickle_is_refused_before_it_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    exploit = pickle.dumps(_Exploit(marker), protocol=2)
    assert b"exec" in exploit
    with pytest.raises(ConfigError, match=r"refusing to load global (__builtin__|builtins)\.exec"):
        read_state_dict(exploit)
    # The same payload where the checkpoint should be, after a valid header.
    out = io.BytesIO()
    header: object
    for header in (0x1950A86A20F9469CFC6C, 1001, {}):
        pickle.dump(header, out, protocol=2)
    out.write(pickle.dumps({"model_state": _Exploit(marker)}, protocol=2))
    with pytest.raises(ConfigError, match="exec"):
        read_state_dict(out.getvalue())
    os_system = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."
    with pytest.raises(ConfigError, match=r"os\.system"):
        read_state_dict(os_system)
    assert not marker.exists()


def test_missing_weights_say_to_run_make(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="run make"):
        load_weights(tmp_path / "pretrained.pt")


def test_install_takes_only_the_checked_weights_out_of_the_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "Resemblyzer-0.1.4-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(WHEEL_MEMBER, b"not the real weights")
        archive.writestr("Resemblyzer-0.1.4.dist-info/LICENSE", "Apache")
    with pytest.raises(ConfigError, match="not the model"):
        install(wheel, tmp_path / "out" / "pretrained.pt")
    assert not (tmp_path / "out" / "pretrained.pt").exists()
    empty = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("resemblyzer/__init__.py", "")
    with pytest.raises(ConfigError, match="has no"):
        install(empty, tmp_path / "out" / "pretrained.pt")


# --- the encoder on hand-made weights ---------------------------------------------------------------------


def buzz(seconds: float, f0: float = 120.0, rate: int = SAMPLE_RATE) -> np.ndarray:
    """A voiced-sounding buzz (a gliding pulse-like tone with syllable-rate loudness) that webrtcvad calls
    speech."""
    t = np.arange(round(seconds * rate)) / rate
    phase = 2 * np.pi * np.cumsum(f0 + 20 * np.sin(2 * np.pi * 3 * t)) / rate
    tone = sum((0.5 / k) * np.sin(k * phase) for k in range(1, 30))
    loudness = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    out = tone * loudness
    return np.asarray(0.3 * out / np.abs(out).max(), dtype=np.float32)


def test_the_encoder_embeds_pcm_at_any_rate_and_refuses_silence() -> None:
    encoder = VoiceEncoder(EncoderWeights.from_state_dict(_tiny_state(np.random.default_rng(2))))
    clip = buzz(2.0)
    at_16k = encoder.embed(clip, SAMPLE_RATE)
    assert at_16k.shape == (3,) and float(np.linalg.norm(at_16k)) == pytest.approx(1.0, abs=1e-5)
    pcm24 = (np.clip(buzz(2.0, rate=24000), -1, 1) * 32767).astype("<i2").tobytes()
    assert cosine(at_16k, encoder.embed(pcm24, 24000)) > 0.99  # resampled to 16 kHz first
    with pytest.raises(AudioFormatError, match="too little speech"):
        encoder.embed(bytes(2 * 24000), 24000)
    with pytest.raises(AudioFormatError):
        encoder.embed(b"\x00\x01\x02", 16000)  # odd PCM


def test_similarity_keeps_the_reference_embedding() -> None:
    from agent.audio.wav import wav_bytes

    encoder = VoiceEncoder(EncoderWeights.from_state_dict(_tiny_state(np.random.default_rng(4))))
    scorer = ResemblyzerSimilarity(encoder, cache_items=1)
    reference = wav_bytes((buzz(2.0, rate=24000) * 32767).astype("<i2").tobytes(), 24000)
    reply = (buzz(1.5, f0=125.0) * 32767).astype("<i2").tobytes()
    first = scorer.similarity_blocking(reference, reply, SAMPLE_RATE)
    assert 0.0 <= first <= 1.0 + 1e-6
    kept = scorer.reference(reference)
    assert scorer.reference(reference) is kept
    assert scorer.similarity_blocking(reference, reply, SAMPLE_RATE) == pytest.approx(first)
