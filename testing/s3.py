"""An S3 service on loopback for the S3 voice-store tests: moto's threaded server (real HTTP, real S3 wire), a
client of its own to look into the bucket the way an operator would, and a proxy that orders one replica's
requests against another's.

One reason to change: how the tests get an S3 endpoint. moto and boto3 are imported when used, so a test run
that touches no S3 test does not pay for loading them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


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


def s3_client(url: str) -> Any:
    """A plain boto3 S3 client of ``url`` (blocking): to make buckets and to read or write objects behind the
    store's back, as another program sharing the bucket would."""
    import boto3

    return boto3.client("s3", endpoint_url=url, region_name=REGION, **CREDENTIALS)


def make_bucket(url: str, bucket: str) -> None:
    """Create ``bucket`` unless it exists."""
    client = s3_client(url)
    with suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=bucket)


async def object_keys(url: str, bucket: str, prefix: str) -> list[str]:
    """Every key under ``prefix`` in ``bucket``, sorted."""

    def keys() -> list[str]:
        pages = s3_client(url).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(str(item["Key"]) for page in pages for item in page.get("Contents", []))

    return await asyncio.to_thread(keys)


async def put_object(url: str, bucket: str, key: str, body: bytes) -> None:
    await asyncio.to_thread(lambda: s3_client(url).put_object(Bucket=bucket, Key=key, Body=body))


@dataclass(frozen=True, slots=True)
class Forwarded:
    """One request the proxy passed on, and the status it got."""

    method: str
    path: str
    status: int


@dataclass
class _Hook:
    method: str
    path_part: str
    action: Callable[[], Awaitable[object]]
    fired: bool = False


@dataclass
class S3Proxy:
    """A reverse proxy to an S3 endpoint on loopback, for a test that must put another replica's work between
    two of a store's requests (a real interleaving, where moto alone runs requests in the order they come).

    ``before(method, path_part, action)``: the first request with that method whose path contains
    ``path_part`` waits for ``action()`` to finish, then goes on. Everything passes through unchanged (bodies,
    headers, statuses) and is recorded in ``forwarded``. ``async with S3Proxy(upstream) as proxy:`` then point
    a store at ``proxy.url``."""

    upstream: str
    forwarded: list[Forwarded] = field(default_factory=list)
    url: str = ""
    _hooks: list[_Hook] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None

    def before(self, method: str, path_part: str, action: Callable[[], Awaitable[object]]) -> None:
        self._hooks.append(_Hook(method, path_part, action))

    @property
    def fired(self) -> int:
        """How many hooks have run."""
        return sum(hook.fired for hook in self._hooks)

    async def __aenter__(self) -> S3Proxy:
        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        for hook in self._hooks:
            if not hook.fired and request.method == hook.method and hook.path_part in request.path:
                hook.fired = True
                await hook.action()
        body = await request.read()
        # The body is passed on whole: the framing headers are the proxy's own on each hop.
        skip = {"transfer-encoding", "content-length", "expect", "connection"}
        headers = {k: v for k, v in request.headers.items() if k.lower() not in skip}
        async with self._session.request(
            request.method, self.upstream + request.path_qs, headers=headers, data=body, allow_redirects=False
        ) as response:
            answer = await response.read()
            self.forwarded.append(Forwarded(request.method, request.path, response.status))
            kept = {k: v for k, v in response.headers.items() if k.lower() not in skip}
            return web.Response(status=response.status, body=answer, headers=kept)
