"""How the ONNX Runtime adapters (Smart Turn, the text turn model) open a model: on the CPU, one call at a time.

Each model is one session with ``threads`` intra-op threads and no inter-op parallelism (the server runs one job
per core on its model workers, ``agent.work.workers``), every graph optimisation on. One reason to change: how an
ONNX model is run on this server's CPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(path: Path, threads: int) -> Any:
    """An ``onnxruntime.InferenceSession`` of ``path``; raises what onnxruntime raises for a bad file."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
