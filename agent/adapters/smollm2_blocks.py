"""GGUF reading and llama.cpp quantised blocks for the SmolLM2 text end-of-turn model (agent/adapters/smollm2_graph.py).

Its one reason to change: the on-disk formats the install step reads — the GGUF container (version 2 or 3: header,
typed metadata, tensor table, aligned data) and the ggml block types the SmolLM2 file uses — and how their blocks
are laid out for ONNX Runtime's ``com.microsoft.MatMulNBits``. Pure numpy, no model needed (tests/unit).

ggml blocks hold 32 consecutive elements of a row (the input dimension of a weight; rows are output features):
- ``Q4_1`` (20 bytes): fp16 ``d``, fp16 ``m``, 16 bytes of 4-bit ``q``; element ``j`` is the low nibble of byte ``j``
  and element ``j + 16`` its high nibble; value ``d * q + m``.
- ``Q8_0`` (34 bytes): fp16 ``d``, 32 int8 ``q``; value ``d * q``.

MatMulNBits takes B as ``[N, blocks, block_size * bits / 8]`` bytes with consecutive elements packed low nibble
first, per-block ``scales`` and ``zero_points``; value ``(q - zero_point) * scale``. A Q4_1 block maps to zero point
0 and scale ``d``, its offset ``m`` kept apart (float zero points ``-m / d`` would be exact too, but ONNX Runtime
has no fast kernel for them: 10x slower). A Q8_0 block maps to unsigned bytes ``q + 128`` with zero point 128.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

BLOCK = 32
GGML_F32, GGML_F16, GGML_Q4_1, GGML_Q8_0 = 0, 1, 3, 8
BLOCK_BYTES = {GGML_Q4_1: 20, GGML_Q8_0: 34}

U8 = npt.NDArray[np.uint8]
F32 = npt.NDArray[np.float32]

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF this reader understands."""


@dataclass(frozen=True)
class Tensor:
    """One tensor of the file: ``shape`` as numpy sees it (rows first), ``data`` the raw bytes, one row per line."""

    name: str
    ggml_type: int
    shape: tuple[int, ...]
    data: U8

    def floats(self) -> F32:
        """The tensor as float32 (F32, F16, Q4_1 or Q8_0)."""
        if self.ggml_type == GGML_F32:
            return self.data.view(np.float32).reshape(self.shape)
        if self.ggml_type == GGML_F16:
            return self.data.view(np.float16).astype(np.float32).reshape(self.shape)
        if self.ggml_type == GGML_Q4_1:
            return dequantize_q4_1(self.data)
        if self.ggml_type == GGML_Q8_0:
            return dequantize_q8_0(self.data)
        raise GGUFError(f"{self.name}: ggml type {self.ggml_type} is not supported")


@dataclass
class GGUF:
    """The metadata (``key -> value``; arrays as lists) and tensors (by name) of a GGUF file, memory-mapped."""

    metadata: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, Tensor] = field(default_factory=dict)


class _Cursor:
    def __init__(self, buffer: mmap.mmap) -> None:
        self.buffer = buffer
        self.at = 0

    def scalar(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.buffer, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        size = self.scalar("<Q")
        text = bytes(self.buffer[self.at : self.at + size]).decode("utf-8", errors="surrogateescape")
        self.at += size
        return text

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, count = self.scalar("<I"), self.scalar("<Q")
            return [self.value(item_kind) for _ in range(count)]
        raise GGUFError(f"unknown GGUF value type {kind} at byte {self.at}")


def read_gguf(path: Path) -> GGUF:
    """Parse ``path``; the tensors' ``data`` are views of a read-only memory map that lives as long as they do."""
    with path.open("rb") as file:
        buffer = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    cursor = _Cursor(buffer)
    if bytes(buffer[:4]) != b"GGUF":
        raise GGUFError(f"{path} is not a GGUF file")
    cursor.at = 4
    version = cursor.scalar("<I")
    if version not in (2, 3):
        raise GGUFError(f"{path}: GGUF version {version} is not supported")
    tensor_count, kv_count = cursor.scalar("<Q"), cursor.scalar("<Q")
    model = GGUF()
    for _ in range(kv_count):
        key = cursor.string()
        model.metadata[key] = cursor.value(cursor.scalar("<I"))
    table = []
    for _ in range(tensor_count):
        name = cursor.string()
        dims = [cursor.scalar("<Q") for _ in range(cursor.scalar("<I"))]
        table.append((name, dims, cursor.scalar("<I"), cursor.scalar("<Q")))
    alignment = int(model.metadata.get("general.alignment", 32))
    start = -(-cursor.at // alignment) * alignment
    whole = np.frombuffer(buffer, dtype=np.uint8)
    for name, dims, kind, offset in table:
        shape = tuple(int(d) for d in reversed(dims))  # ggml lists the fastest dimension first
        row = shape[-1]
        if kind in BLOCK_BYTES:
            if row % BLOCK:
                raise GGUFError(f"{name}: a row of {row} is not whole blocks")
            row_bytes = row // BLOCK * BLOCK_BYTES[kind]
        elif kind in (GGML_F32, GGML_F16):
            row_bytes = row * (4 if kind == GGML_F32 else 2)
        else:
            raise GGUFError(f"{name}: ggml type {kind} is not supported")
        rows = int(np.prod(shape[:-1], dtype=np.int64))
        data = whole[start + offset : start + offset + rows * row_bytes].reshape(rows, row_bytes)
        model.tensors[name] = Tensor(name, kind, shape, data)
    return model


# --- blocks -----------------------------------------------------------------------------------------------


def _fp16(raw: U8, at: int) -> F32:
    """The fp16 at byte ``at`` of every block of ``raw`` (rows, blocks, bytes), as float32 (rows, blocks)."""
    return np.ascontiguousarray(raw[:, :, at : at + 2]).view(np.float16)[..., 0].astype(np.float32)


def _blocks(data: U8, kind: int) -> U8:
    if data.ndim != 2 or data.shape[1] % BLOCK_BYTES[kind]:
        raise GGUFError(f"expected rows of whole {BLOCK_BYTES[kind]}-byte blocks, got shape {data.shape}")
    return data.reshape(data.shape[0], -1, BLOCK_BYTES[kind])


def _q4_1_values(blocks: U8) -> U8:
    """The 4-bit values of Q4_1 blocks (rows, blocks, 20 bytes) in element order: (rows, blocks, 32)."""
    packed = blocks[:, :, 4:]
    return np.concatenate([packed & 0x0F, packed >> 4], axis=-1)


def dequantize_q4_1(data: U8) -> F32:
    """Rows of Q4_1 blocks (rows, blocks * 20 bytes) as float32 (rows, blocks * 32), as llama.cpp reads them."""
    blocks = _blocks(data, GGML_Q4_1)
    d, m = _fp16(blocks, 0), _fp16(blocks, 2)
    values = d[..., None] * _q4_1_values(blocks).astype(np.float32) + m[..., None]
    return values.reshape(data.shape[0], -1)


def dequantize_q8_0(data: U8) -> F32:
    """Rows of Q8_0 blocks (rows, blocks * 34 bytes) as float32 (rows, blocks * 32)."""
    blocks = _blocks(data, GGML_Q8_0)
    q = np.ascontiguousarray(blocks[:, :, 2:]).view(np.int8).astype(np.float32)
    return (_fp16(blocks, 0)[..., None] * q).reshape(data.shape[0], -1)


def pack_nibbles(values: U8) -> U8:
    """4-bit values (..., 32) packed MatMulNBits' way: two consecutive elements a byte, the first in the low nibble."""
    return (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)


def repack_q4_1(data: U8) -> tuple[U8, F32, F32]:
    """Q4_1 rows -> MatMulNBits (bits 4, block 32, zero point 0): B (rows, blocks, 16), scales ``d`` and offsets ``m``
    (both rows, blocks). The weight is ``B * d + m`` per block; the graph adds the ``m`` part as (block sums of the
    input) @ offsets, a small matmul."""
    blocks = _blocks(data, GGML_Q4_1)
    return pack_nibbles(_q4_1_values(blocks)), _fp16(blocks, 0), _fp16(blocks, 2)


def repack_q8_0(data: U8) -> tuple[U8, F32]:
    """Q8_0 rows -> unsigned bytes ``q + 128`` (rows, blocks, 32) and scales (rows, blocks); the zero point is 128."""
    blocks = _blocks(data, GGML_Q8_0)
    unsigned = (np.ascontiguousarray(blocks[:, :, 2:]).view(np.int8).astype(np.int16) + 128).astype(np.uint8)
    return unsigned, _fp16(blocks, 0)


def dequantize_nbits(b: U8, scales: F32, bits: int, zero_point: int, offsets: F32 | None = None) -> F32:
    """MatMulNBits' B (N, blocks, bytes) back to float32 (N, blocks * 32): ``(q - zero_point) * scale (+ offset)``,
    scales and offsets per block (N, blocks). The reference the tests and the numpy forward use, independent of ONNX
    Runtime."""
    n, count = b.shape[0], b.shape[1]
    if bits == 4:
        q = np.stack([b & 0x0F, b >> 4], axis=-1).reshape(n, count, BLOCK)
    elif bits == 8:
        q = b.reshape(n, count, BLOCK)
    else:
        raise ValueError(f"bits must be 4 or 8, not {bits}")
    values = (q.astype(np.float32) - np.float32(zero_point)) * scales.reshape(n, count, 1)
    if offsets is not None:
        values = values + offsets.reshape(n, count, 1)
    return values.reshape(n, count * BLOCK)
