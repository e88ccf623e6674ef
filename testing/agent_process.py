"""A ``python -m agent`` server process on a free loopback port, for the tests and benchmarks of several replicas.

``start_agent`` starts one with the environment it is given, its output in a log file, and waits loudly until
its ``/healthz`` answers 200 (models loaded); ``AgentProcess.stop`` sends SIGTERM (the server drains) and returns
its exit code. It changes when the way a test runs a server process changes.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from testing.sockets import free_port, http_get
from testing.waits import until_sync

ROOT = Path(__file__).parents[1]


@dataclass
class AgentProcess:
    name: str
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def metric(self, name: str, labels: str) -> float:
        """The value of ``name{labels}`` on its ``/metrics`` (``labels`` as written there: ``a="x",b="y"``); 0 when
        not counted yet."""
        wanted = f"{name}{{{labels}}} "
        lines = http_get(self.url("/metrics")).text.splitlines()
        return sum(float(line.removeprefix(wanted)) for line in lines if line.startswith(wanted))

    def stop(self) -> int:
        """SIGTERM, and its exit code (killed, and ``TimeoutExpired`` raised, if it hangs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=120)  # a guard against a hang, not a speed check
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


def start_agent(name: str, directory: Path, env: dict[str, str]) -> AgentProcess:
    """``python -m agent`` with ``env`` (the whole environment), ready for calls."""
    port, log = free_port(), directory / f"agent-{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    agent = AgentProcess(name, proc, port, log)

    def ready() -> bool:
        assert proc.poll() is None, f"server {name} exited:\n{agent.output()}"
        try:
            return http_get(agent.url("/healthz"), 2).status == 200
        except OSError:
            return False

    until_sync(ready, 120, lambda: f"server {name} to be ready:\n{agent.output()}", every_s=0.2)
    return agent
