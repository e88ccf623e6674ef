"""A real ``redis-server`` on a loopback port, for the tests and benchmarks of the limits replicas share.

``RedisServer`` starts the Debian package's ``redis-server`` (``/usr/bin/redis-server``; ``REDIS_SERVER`` names
another) on a free loopback port, with no persistence (``--save ""``, ``--appendonly no``) in a temporary
directory, and waits loudly until it answers ``PING``. ``stop`` ends it (what a test of "Redis went down" needs)
and ``start`` starts it again on the same port, empty; ``pause`` freezes it (a Redis that hangs). It changes
when the way tests get a Redis changes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from testing.sockets import free_port
from testing.waits import until_sync

REDIS_SERVER = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process; ``url`` stays the same across ``stop`` and ``start``."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port if port is not None else free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start it (empty) and wait until it answers ``PING``; ``AssertionError`` with its log if it does not."""
        assert not self.running, "redis-server is running already"
        with self.log.open("ab") as out:
            self._proc = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.directory),
                    "--protected-mode",
                    "yes",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        proc = self._proc

        def up() -> bool:
            assert proc.poll() is None, f"redis-server exited ({proc.returncode}):\n{self.log.read_text('replace')}"
            return _answers_ping(self.port)

        until_sync(up, what=lambda: f"redis-server on port {self.port} to answer PING:\n{self.log.read_text()}")

    def pause(self, paused: bool = True) -> None:
        """Freeze it (SIGSTOP: it takes connections and answers nothing, as a hung Redis does), or thaw it."""
        assert self._proc is not None and self.running, "redis-server is not running"
        self._proc.send_signal(signal.SIGSTOP if paused else signal.SIGCONT)

    def stop(self) -> None:
        """End it (SIGTERM, then SIGKILL if it lingers) and wait until the port no longer answers."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGCONT)  # a paused one too
        proc.terminate()
        try:
            proc.wait(timeout=30)  # a guard against a hang, not a speed check
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        until_sync(lambda: not _answers_ping(self.port), what=f"redis-server on port {self.port} to stop answering")


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A started ``RedisServer`` in a temporary directory, stopped on leaving."""
    with tempfile.TemporaryDirectory(prefix="redis-") as directory:
        server = RedisServer(Path(directory))
        server.start()
        try:
            yield server
        finally:
            server.stop()
