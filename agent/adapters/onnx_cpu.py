"""How the ONNX Runtime adapters (Smart Turn, the text turn model) open a model: on the CPU, one call at a time.

Each model is one session with ``threads`` intra-op threads and no inter-op parallelism (the server runs one job
per core on its model workers, ``agent.work.workers``), every graph optimisation on where it pays. One reason to
change: how an ONNX model is run on this server's CPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(path: Path, threads: int, *, optimise: bool = True) -> Any:
    """An ``onnxruntime.InferenceSession`` of ``path``; raises what onnxruntime raises for a bad file.

    ``optimise=False``: no graph optimisations, for a model they make no faster; they cost CPU at every load."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = threads
    level = ort.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_ALL if optimise else level.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
