"""GGUF reading and the Q4_1 / Q8_0 block repacking of agent/adapters/smollm2_blocks.py, on made-up blocks and a
tiny hand-written GGUF (no model)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from agent.adapters.smollm2_blocks import (
    GGML_F32,
    GGML_Q4_1,
    GGUFError,
    dequantize_nbits,
    dequantize_q4_1,
    dequantize_q8_0,
    pack_nibbles,
    read_gguf,
    repack_q4_1,
    repack_q8_0,
)

RNG = np.random.default_rng(7)


def _q4_1_rows(rows: int, blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random Q4_1 rows as bytes, with their d, m (float16) and 4-bit values (rows, blocks, 32)."""
    d = (RNG.standard_normal((rows, blocks)) * 0.05).astype(np.float16)
    m = (RNG.standard_normal((rows, blocks)) * 0.2).astype(np.float16)
    d[0, 0] = 0  # a flat block: every value is m
    q = RNG.integers(0, 16, (rows, blocks, 32), dtype=np.uint8)
    packed = q[..., :16] | (q[..., 16:] << 4)  # llama.cpp: element j low nibble, element j + 16 high nibble
    raw = np.concatenate([d[..., None].view(np.uint8), m[..., None].view(np.uint8), packed], axis=-1)
    return raw.reshape(rows, blocks * 20), d, m, q


def test_q4_1_dequantises_as_llama_cpp_does() -> None:
    raw, d, m, q = _q4_1_rows(5, 3)
    expected = d.astype(np.float32)[..., None] * q.astype(np.float32) + m.astype(np.float32)[..., None]
    assert np.array_equal(dequantize_q4_1(raw), expected.reshape(5, 96))


def test_q4_1_repacked_for_matmulnbits_is_the_same_weight() -> None:
    raw, _, _, q = _q4_1_rows(7, 4)
    b, scales, offsets = repack_q4_1(raw)
    assert b.shape == (7, 4, 16) and scales.shape == offsets.shape == (7, 4)
    assert np.array_equal(dequantize_nbits(b, scales, 4, 0, offsets), dequantize_q4_1(raw))
    assert np.array_equal(b[..., 0] & 0x0F, q[..., 0]) and np.array_equal(b[..., 0] >> 4, q[..., 1])


def test_nibbles_pack_two_consecutive_elements_low_first() -> None:
    values = np.arange(32, dtype=np.uint8) % 16
    packed = pack_nibbles(values)
    assert packed.shape == (16,)
    assert packed[0] == 0x10 and packed[1] == 0x32 and packed[15] == 0xFE


def test_q8_0_repacked_as_unsigned_bytes_with_zero_point_128() -> None:
    d = (RNG.standard_normal((3, 2)) * 0.01).astype(np.float16)
    q = RNG.integers(-128, 128, (3, 2, 32), dtype=np.int8)
    raw = np.concatenate([d[..., None].view(np.uint8), q.view(np.uint8)], axis=-1).reshape(3, 68)
    expected = (d.astype(np.float32)[..., None] * q.astype(np.float32)).reshape(3, 64)
    assert np.array_equal(dequantize_q8_0(raw), expected)
    b, scales = repack_q8_0(raw)
    assert b.dtype == np.uint8 and b.shape == (3, 2, 32)
    assert np.array_equal(dequantize_nbits(b, scales, 8, 128), expected)


def test_rows_that_are_not_whole_blocks_are_refused() -> None:
    with pytest.raises(GGUFError):
        dequantize_q4_1(np.zeros((2, 30), np.uint8))
    with pytest.raises(ValueError):
        dequantize_nbits(np.zeros((1, 1, 16), np.uint8), np.ones((1, 1), np.float32), 3, 0)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _gguf(tensors: list[tuple[str, tuple[int, ...], int, bytes]], alignment: int = 32) -> bytes:
    """A GGUF v3: three metadata keys (a string, a u32, an array of strings) and ``tensors`` (numpy shapes)."""
    meta = _string("general.architecture") + struct.pack("<I", 8) + _string("llama")
    meta += _string("llama.block_count") + struct.pack("<II", 4, 30)
    meta += _string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + _string("a") + _string("<|im_end|>")
    table, data = b"", b""
    for name, shape, kind, raw in tensors:
        data += b"\0" * (-len(data) % alignment)
        dims = b"".join(struct.pack("<Q", n) for n in reversed(shape))
        table += _string(name) + struct.pack("<I", len(shape)) + dims + struct.pack("<IQ", kind, len(data))
        data += raw
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 3) + meta + table
    return head + b"\0" * (-len(head) % alignment) + data


def test_a_gguf_file_reads_back_metadata_and_tensors(tmp_path: Path) -> None:
    norm = np.arange(4, dtype=np.float32)
    q4, *_ = _q4_1_rows(2, 2)
    path = tmp_path / "tiny.gguf"
    path.write_bytes(_gguf([("norm", (4,), GGML_F32, norm.tobytes()), ("w", (2, 64), GGML_Q4_1, q4.tobytes())]))
    model = read_gguf(path)
    assert model.metadata == {
        "general.architecture": "llama",
        "llama.block_count": 30,
        "tokenizer.ggml.tokens": ["a", "<|im_end|>"],
    }
    assert np.array_equal(model.tensors["norm"].floats(), norm)
    weight = model.tensors["w"]
    assert weight.shape == (2, 64) and weight.ggml_type == GGML_Q4_1
    assert np.array_equal(weight.data, q4)
    assert np.array_equal(weight.floats(), dequantize_q4_1(q4))


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "not.gguf"
    path.write_bytes(b"GGML" + bytes(60))
    with pytest.raises(GGUFError, match="not a GGUF"):
        read_gguf(path)
