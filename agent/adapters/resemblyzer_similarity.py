"""Speaker similarity offline: resemblyzer's voice encoder (Apache-2.0) run in numpy, without torch.

``VoiceEncoder.embed(pcm, sample_rate)`` gives a clip's 256-d speaker embedding; ``similarity(a, b)`` the cosine
of two (a reply against its own voice's reference: 0.85-0.96 on the project's synthetic voices; against other
voices 0.33-0.93, median 0.66: docs/benchmarks.md, "Voice similarity"). ``ResemblyzerSimilarity`` is the
asynchronous form the server uses (``agent.runtime.call.fidelity``): the work runs on a thread, one clip at a time.
The arithmetic is ``agent.audio.speaker_embedding``; this module loads the weights, hands the audio to webrtcvad,
and installs the model.

**Where the weights come from.** ``pretrained.pt`` (17 MB) ships inside the ``resemblyzer`` 0.1.4 wheel on PyPI.
The install step (``make``; ``requirements/resemblyzer.txt`` pins the wheel by hash) downloads that wheel with
pip, without its dependencies, and ``python -m agent.adapters.resemblyzer_similarity install WHEEL`` copies the
weights (sha256-checked) and the licence out of it into ``<venv>/share/voice-agent/resemblyzer/``. Nothing of
resemblyzer, torch or librosa is installed or imported; nothing is downloaded at run time. The weights are checked
against the same sha256 each time they are loaded (``AGENT_FIDELITY__MODEL`` may name only a copy of that file).

**Reading the weights safely.** The file is PyTorch's legacy (pre-1.6) serialization: a magic-number pickle,
a version and a system-info pickle, the pickled checkpoint whose tensors point at storages by persistent id,
the list of storage keys, then each storage's raw little-endian data (an int64 element count first). A pickle
can run any callable it names, so ``_RestrictedUnpickler`` resolves only ``collections.OrderedDict``,
``torch._utils._rebuild_tensor_v2`` (to a view of our own) and the storage type names (to dtypes); any other
global (``os.system``, ``builtins.eval``...) fails with ``ConfigError`` before anything runs.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import io
import pickle
import struct
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import numpy as np
import numpy.typing as npt
import webrtcvad

from agent.audio.pcm import pcm16_to_float
from agent.audio.resample import resample
from agent.audio.speaker_embedding import (
    SAMPLE_RATE,
    EncoderWeights,
    FloatArray,
    cosine,
    preprocess,
    utterance_embedding,
)
from agent.audio.wav import read_audio
from agent.errors import AudioFormatError, ConfigError, ProviderError
from agent.model_files import install_from_wheel, refuse_unless

MODEL_FILE = "pretrained.pt"
MODEL_SHA256 = "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e"
"""``resemblyzer/pretrained.pt`` of resemblyzer 0.1.4 (the wheel itself is hash-locked in
requirements/resemblyzer.txt)."""
WHEEL_MEMBER = f"resemblyzer/{MODEL_FILE}"
LICENSE_MEMBER_SUFFIX = ".dist-info/LICENSE"
MIN_SPEECH_S = 0.5
"""Less speech than this (after silences are cut) is refused: too little to say whose voice it is."""

_MAGIC = 0x1950A86A20F9469CFC6C  # torch.serialization.MAGIC_NUMBER
_DTYPES = {"FloatStorage": np.dtype("<f4"), "DoubleStorage": np.dtype("<f8"), "HalfStorage": np.dtype("<f2")}
_DTYPES |= {"LongStorage": np.dtype("<i8"), "IntStorage": np.dtype("<i4")}


def default_model_path() -> Path:
    """Where the install step puts the weights: ``<sys.prefix>/share/voice-agent/resemblyzer/pretrained.pt``."""
    return Path(sys.prefix) / "share" / "voice-agent" / "resemblyzer" / MODEL_FILE


# --- reading pretrained.pt --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Storage:
    key: str
    dtype: np.dtype[Any]
    count: int


@dataclass(frozen=True, slots=True)
class _TensorRef:
    storage: _Storage
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]


def _rebuild_tensor(storage: object, offset: object, shape: object, stride: object, *_: object) -> _TensorRef:
    if not (isinstance(storage, _Storage) and isinstance(offset, int) and isinstance(shape, tuple)):
        raise pickle.UnpicklingError("malformed tensor")
    if not isinstance(stride, tuple) or len(stride) != len(shape):
        raise pickle.UnpicklingError("malformed tensor stride")
    if not all(isinstance(n, int) and n >= 0 for n in (offset, *shape, *stride)):
        raise pickle.UnpicklingError("malformed tensor shape")
    return _TensorRef(storage, offset, shape, stride)


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles a PyTorch checkpoint without running anything: see the module docstring."""

    _ALLOWED: ClassVar[dict[tuple[str, str], object]] = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    }

    def __init__(self, file: BinaryIO, storages: dict[str, _Storage]) -> None:
        super().__init__(file)
        self._storages = storages

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in _DTYPES:
            return _DTYPES[name]
        found = self._ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"refusing to load global {module}.{name}")
        return found

    def persistent_load(self, pid: Any) -> _Storage:
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unexpected persistent id")
        _, dtype, key, _location, count, view = pid
        if not isinstance(dtype, np.dtype) or not isinstance(key, str) or not isinstance(count, int) or view:
            raise pickle.UnpicklingError("malformed storage")
        storage = self._storages.setdefault(key, _Storage(key, dtype, count))
        if storage != _Storage(key, dtype, count):
            raise pickle.UnpicklingError(f"storage {key} declared twice differently")
        return storage


def _materialise(ref: _TensorRef, data: dict[str, npt.NDArray[Any]]) -> npt.NDArray[np.float32]:
    flat = data[ref.storage.key]
    last = ref.offset + sum((n - 1) * s for n, s in zip(ref.shape, ref.stride, strict=True)) if all(ref.shape) else -1
    if last >= flat.size:
        raise pickle.UnpicklingError("tensor reaches past its storage")
    if not all(ref.shape):
        return np.zeros(ref.shape, np.float32)
    view = np.lib.stride_tricks.as_strided(
        flat[ref.offset :], ref.shape, tuple(s * flat.itemsize for s in ref.stride), writeable=False
    )
    return np.array(view, dtype=np.float32)


def read_state_dict(source: bytes) -> dict[str, npt.NDArray[np.float32]]:
    """The ``model_state`` tensors of a legacy PyTorch checkpoint, as float32 arrays, read without running
    any code it names. Raises ``ConfigError`` for anything else (or a file that is cut short)."""
    stream = io.BytesIO(source)
    storages: dict[str, _Storage] = {}
    try:
        if _RestrictedUnpickler(stream, storages).load() != _MAGIC:
            raise pickle.UnpicklingError("not a legacy PyTorch file")
        _RestrictedUnpickler(stream, storages).load()  # protocol version
        _RestrictedUnpickler(stream, storages).load()  # system info
        checkpoint = _RestrictedUnpickler(stream, storages).load()
        keys = _RestrictedUnpickler(stream, storages).load()
        state = checkpoint.get("model_state") if isinstance(checkpoint, dict) else None
        if not isinstance(state, dict) or not isinstance(keys, list):
            raise pickle.UnpicklingError("no model_state")
        wanted = {ref.storage.key for ref in state.values() if isinstance(ref, _TensorRef)}
        data: dict[str, npt.NDArray[Any]] = {}
        for key in keys:
            storage = storages.get(key) if isinstance(key, str) else None
            header = stream.read(8)
            if storage is None or len(header) != 8 or struct.unpack("<q", header)[0] != storage.count:
                raise pickle.UnpicklingError(f"storage {key!r} does not match its declaration")
            size = storage.count * storage.dtype.itemsize
            if key in wanted:
                raw = stream.read(size)
                if len(raw) != size:
                    raise pickle.UnpicklingError("file cut short")
                data[key] = np.frombuffer(raw, dtype=storage.dtype)
            else:
                stream.seek(size, io.SEEK_CUR)
        if wanted - data.keys():
            raise pickle.UnpicklingError("a tensor's storage is missing")
        return {name: _materialise(ref, data) for name, ref in state.items() if isinstance(ref, _TensorRef)}
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, struct.error) as exc:
        raise ConfigError(f"cannot read the speaker model: {exc}") from exc


def load_weights(path: Path | None = None) -> EncoderWeights:
    """The encoder's weights from ``path`` (default: ``default_model_path()``). Raises ``ConfigError`` when the
    file is missing (naming the install step), is not the checked file (its sha256, ``MODEL_SHA256``, taken of the
    very bytes that are then read: ~20 ms) or is not the checkpoint this adapter reads."""
    target = path if path is not None else default_model_path()
    if not target.is_file():
        raise ConfigError(
            f"speaker model {str(target)!r} is missing; run make (or make speaker-model), which extracts it from "
            "the resemblyzer wheel: python -m agent.adapters.resemblyzer_similarity install WHEEL"
        )
    data = target.read_bytes()
    refuse_unless("speaker model", target, hashlib.sha256(data).hexdigest(), MODEL_SHA256, "make speaker-model")
    try:
        return EncoderWeights.from_state_dict(read_state_dict(data))
    except ValueError as exc:
        raise ConfigError(f"speaker model {str(target)!r}: {exc}") from exc


# --- the encoder ------------------------------------------------------------------------------------------


class VoiceEncoder:
    """Blocking speaker embeddings; safe to share between threads (webrtcvad state is per call)."""

    def __init__(self, weights: EncoderWeights) -> None:
        self.weights = weights

    @classmethod
    def load(cls, path: Path | None = None) -> VoiceEncoder:
        return cls(load_weights(path))

    def embed(self, pcm: bytes | FloatArray, sample_rate: int) -> FloatArray:
        """The speaker embedding of a mono clip: PCM16LE bytes or float samples at ``sample_rate``.

        Raises ``AudioFormatError`` for odd PCM or a bad rate, and when the clip holds less than
        ``MIN_SPEECH_S`` of speech."""
        audio = pcm16_to_float(pcm) if isinstance(pcm, bytes) else np.asarray(pcm, np.float32).reshape(-1)
        if sample_rate != SAMPLE_RATE:
            audio = resample(audio, sample_rate, SAMPLE_RATE)
        vad = webrtcvad.Vad(3)
        speech = preprocess(audio, lambda window: bool(vad.is_speech(window, SAMPLE_RATE)))
        if speech.size < MIN_SPEECH_S * SAMPLE_RATE:
            raise AudioFormatError(f"too little speech to compare ({speech.size / SAMPLE_RATE:.2f} s)")
        return utterance_embedding(speech, self.weights)

    def embed_wav(self, wav: bytes) -> FloatArray:
        """The embedding of a WAV file's audio (a voice's reference). Raises ``AudioFormatError``."""
        audio, rate = read_audio(wav)
        return self.embed(audio, rate)


def similarity(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Cosine similarity of two speaker embeddings (0..1 for these embeddings)."""
    return cosine(a, b)


class ResemblyzerSimilarity:
    """``await similarity(reference_wav, pcm, sample_rate)``: how much a clip sounds like a voice's reference
    WAV (cosine, 0..1), computed on a worker thread, one clip at a time across the process. Reference
    embeddings are kept (by the WAV's SHA-256, ``cache_items`` of them). Raises ``AudioFormatError`` for audio
    without enough speech, ``ProviderError("resemblyzer")`` if the computation fails otherwise."""

    def __init__(self, encoder: VoiceEncoder, cache_items: int = 64) -> None:
        self.encoder = encoder
        self._lock = threading.Lock()
        self._references: OrderedDict[str, FloatArray] = OrderedDict()
        self._cache_items = cache_items

    @classmethod
    def load(cls, path: Path | None = None) -> ResemblyzerSimilarity:
        return cls(VoiceEncoder.load(path))

    async def similarity(self, reference_wav: bytes, pcm: bytes, sample_rate: int) -> float:
        return await asyncio.to_thread(self.similarity_blocking, reference_wav, pcm, sample_rate)

    def similarity_blocking(self, reference_wav: bytes, pcm: bytes, sample_rate: int) -> float:
        """The same, on the calling thread."""
        with self._lock:
            try:
                return similarity(self.reference(reference_wav), self.encoder.embed(pcm, sample_rate))
            except AudioFormatError:
                raise
            except Exception as exc:  # numpy or webrtcvad failing on odd input: never a vendor type upward
                raise ProviderError("resemblyzer", str(exc)) from exc

    def reference(self, wav: bytes) -> FloatArray:
        """The (kept) embedding of a reference WAV."""
        key = hashlib.sha256(wav).hexdigest()
        found = self._references.get(key)
        if found is None:
            found = self._references[key] = self.encoder.embed_wav(wav)
            while len(self._references) > self._cache_items:
                self._references.popitem(last=False)
        self._references.move_to_end(key)
        return found


# --- install step -----------------------------------------------------------------------------------------


def install(wheel: Path, destination: Path | None = None) -> Path:
    """Copy the weights (and resemblyzer's licence, next to them) out of a ``resemblyzer`` wheel; returns the
    path. Raises ``ConfigError`` when the wheel lacks them or they are not the checked file."""
    target = destination if destination is not None else default_model_path()
    return install_from_wheel(wheel, WHEEL_MEMBER, MODEL_SHA256, target, LICENSE_MEMBER_SUFFIX, "LICENSE.resemblyzer")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent.adapters.resemblyzer_similarity")
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser("install", help="extract the weights from a resemblyzer wheel")
    put.add_argument("wheel", type=Path)
    put.add_argument("--to", type=Path, default=None, help=f"weights file (default: {default_model_path()})")
    compare = commands.add_parser("compare", help="speaker similarity of two audio files (WAV, FLAC, OGG)")
    compare.add_argument("first", type=Path)
    compare.add_argument("second", type=Path)
    timing = commands.add_parser("time", help="time the embedding of N clips of S seconds of noise")
    timing.add_argument("-n", type=int, default=20)
    timing.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args(argv)
    if args.command == "install":
        path = install(args.wheel, args.to)
        print(f"{path} ({path.stat().st_size} bytes, sha256 {MODEL_SHA256})")
        return 0
    try:
        encoder = VoiceEncoder.load()
        if args.command == "compare":
            a, b = (encoder.embed_wav(path.read_bytes()) for path in (args.first, args.second))
            print(f"{similarity(a, b):.4f}")
            return 0
    except (ConfigError, AudioFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    clip = (0.1 * np.random.default_rng(0).standard_normal(round(args.seconds * SAMPLE_RATE))).astype(np.float32)
    encoder.embed(clip, SAMPLE_RATE)
    spent = []
    for _ in range(args.n):
        started = time.perf_counter()
        encoder.embed(clip, SAMPLE_RATE)
        spent.append(time.perf_counter() - started)
    print(
        f"{args.n} clips of {args.seconds:g} s: p50 {1000 * np.percentile(spent, 50):.1f} ms, "
        f"p95 {1000 * np.percentile(spent, 95):.1f} ms per clip"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
