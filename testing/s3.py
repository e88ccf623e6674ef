"""An S3 service on loopback for the S3 voice-store tests: moto's threaded server (real HTTP, real S3 wire).

One reason to change: how the tests get an S3 endpoint. moto is imported when a server is started, so a test run
that touches no S3 test does not pay for loading it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def s3_server() -> Iterator[str]:
    """Run moto's S3 server on a free loopback port for the ``with`` block; yields its URL."""
    from moto.server import ThreadedMotoServer  # a heavy import, only for the tests that use S3

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
