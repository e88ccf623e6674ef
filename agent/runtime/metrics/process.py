"""The server process on ``/metrics``: resident memory, open file descriptors, threads and asyncio tasks.

Read at each scrape (from ``/proc/self`` on Linux; a figure that cannot be read is left out), so a soak or a
dashboard can see memory and handles come back to their baseline after the callers leave. Reason to change: a
process figure is added or read another way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import threading
from pathlib import Path

from agent.runtime.metrics.registry import Gauge, Registry

PROC = Path("/proc/self")


def resident_bytes(proc: Path = PROC) -> int | None:
    """Resident set size now (``VmRSS``), or ``None`` where ``/proc`` is not there."""
    try:
        for line in (proc / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def open_fds(proc: Path = PROC) -> int | None:
    try:
        return len(os.listdir(proc / "fd"))
    except OSError:
        return None


class ProcessMetrics:
    """Registered on the server's registry; ``update`` reads the process's figures (on the event loop)."""

    def __init__(self, r: Registry) -> None:
        self.rss = r.register(Gauge("process_resident_memory_bytes", "Resident memory size in bytes."))
        self.peak_rss = r.register(
            Gauge("voice_agent_peak_resident_memory_bytes", "Largest resident memory size so far, in bytes.")
        )
        self.fds = r.register(Gauge("process_open_fds", "Open file descriptors."))
        self.threads = r.register(Gauge("voice_agent_threads", "Python threads alive (model workers included)."))
        self.tasks = r.register(Gauge("voice_agent_asyncio_tasks", "Tasks on the server's event loop."))

    def update(self) -> None:
        rss = resident_bytes()
        if rss is not None:
            self.rss.set(rss)
        fds = open_fds()
        if fds is not None:
            self.fds.set(fds)
        # The kernel's high-water mark (kB on Linux) is updated lazily and can trail the resident size just read:
        # a peak is never below the present.
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        self.peak_rss.set(max(peak, rss or 0))
        self.threads.set(threading.active_count())
        with contextlib.suppress(RuntimeError):  # no running loop (a test rendering outside one)
            self.tasks.set(len(asyncio.all_tasks()))
