"""`--workers N`: several serving processes on one address, each a whole API server.

What a client can tell: connections land on every worker; a write accepted on one connection
is seen by watchers on all of them in one order and read back on any other connection; a
killed worker is started again while requests keep being answered; SIGTERM stops every
worker and the parent exits 0; a killed parent takes its workers with it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kube.api import ConfigMap, Namespace
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually, eventually_sync
from tests.apiserver.test_several_apiservers import watch_added

pytestmark = pytest.mark.timeout(180)


def _workers(pid: int) -> list[int]:
    """The live worker processes of the server whose parent is `pid`."""
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _established_on(pid: int, port: int) -> int:
    """How many established TCP connections to `port` process `pid` holds (from /proc, as ss -tnp reads)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[3] == "01" and fields[9] in inodes:
                count += 1
    return count


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _soon(check: Callable[[], object], *, timeout: float) -> None:
    """Wait for `check()` without blocking the event loop the clients run on."""
    async def probe() -> bool:
        return bool(check())
    await eventually(probe, timeout=timeout)


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    with ApiServerHarness(tmp_path_factory.mktemp("workers"), etcd_endpoint=etcd_endpoint,
                          extra_args=["--workers", "2"]) as harness:
        eventually_sync(lambda: len(_workers(harness.process.pid)) == 2, timeout=30)
        yield harness


async def _ns(api: ApiServerHarness) -> str:
    ns = f"workers-{uuid.uuid4().hex[:6]}"
    async with api.client() as c:
        await c.create(Namespace.model_validate({"metadata": {"name": ns}}))
    return ns


async def test_watchers_on_every_worker_see_every_write_in_one_order(api: ApiServerHarness) -> None:
    ns = await _ns(api)
    async with api.client() as c:
        rv = (await c.list(ConfigMap, ns)).resource_version or "0"
    watchers = [api.client() for _ in range(16)]  # a connection each: the kernel spreads them over the workers
    try:
        tasks = [asyncio.create_task(watch_added(w, ns, rv, 40)) for w in watchers]
        await _soon(lambda: sum(_established_on(p, api.port) for p in _workers(api.process.pid)) >= 16, timeout=30)
        held = [_established_on(p, api.port) for p in _workers(api.process.pid)]
        assert all(held), f"watch connections per worker: {held}"

        async def write(i: int) -> str:
            async with api.client() as fresh:  # a new connection per write, so writes land on both workers
                created = await fresh.create(ConfigMap.model_validate(
                    {"metadata": {"name": f"cm-{i}", "namespace": ns}, "data": {"i": str(i)}}))
                return str(created.metadata.resource_version)

        acknowledged = await asyncio.gather(*(write(i) for i in range(40)))
        histories = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        assert all(h == histories[0] for h in histories)
        assert [int(r) for _, r in histories[0]] == sorted(int(r) for r in acknowledged)
    finally:
        for w in watchers:
            await w.close()


async def test_a_write_is_read_back_on_any_other_connection(api: ApiServerHarness) -> None:
    ns = await _ns(api)
    for i in range(20):
        async with api.client() as writer:
            created = await writer.create(ConfigMap.model_validate(
                {"metadata": {"name": f"cm-{i}", "namespace": ns}, "data": {"i": str(i)}}))
        async with api.client() as reader:
            got = await reader.get(ConfigMap, f"cm-{i}", ns)
            listed = await reader.list(ConfigMap, ns)
        assert got.metadata.resource_version == created.metadata.resource_version
        assert f"cm-{i}" in {item.metadata.name for item in listed.items}


async def test_a_killed_worker_is_started_again_while_requests_are_answered(api: ApiServerHarness) -> None:
    ns = await _ns(api)
    before = _workers(api.process.pid)
    os.kill(before[0], signal.SIGKILL)
    for i in range(30):  # a connection each; those the kernel queues for the dead worker wait for its successor
        async with api.client() as c:
            await c.create(ConfigMap.model_validate({"metadata": {"name": f"cm-{i}", "namespace": ns}}))
    await _soon(lambda: len(_workers(api.process.pid)) == 2 and before[0] not in _workers(api.process.pid),
                timeout=60)
    async with api.client() as c:
        assert len((await c.list(ConfigMap, ns)).items) == 30


def test_sigterm_stops_every_worker_and_frees_the_port(etcd_endpoint: str, tmp_path: Path) -> None:
    harness = ApiServerHarness(tmp_path, etcd_endpoint=etcd_endpoint, extra_args=["--workers", "3"]).start()
    eventually_sync(lambda: len(_workers(harness.process.pid)) == 3, timeout=30)
    workers = _workers(harness.process.pid)
    assert harness.process.stop() == 0
    assert not [p for p in workers if Path(f"/proc/{p}").exists()]
    assert _port_is_free(harness.port)


def test_a_killed_parent_takes_its_workers_with_it(etcd_endpoint: str, tmp_path: Path) -> None:
    harness = ApiServerHarness(tmp_path, etcd_endpoint=etcd_endpoint, extra_args=["--workers", "2"]).start()
    eventually_sync(lambda: len(_workers(harness.process.pid)) == 2, timeout=30)
    workers = _workers(harness.process.pid)
    os.kill(harness.process.pid, signal.SIGKILL)
    harness.process.popen.wait(10)  # type: ignore[union-attr]
    eventually_sync(lambda: not [p for p in workers if Path(f"/proc/{p}").exists()], timeout=10)
    eventually_sync(lambda: _port_is_free(harness.port), timeout=10)


@pytest.mark.parametrize("value", ["0", "65"])
def test_workers_out_of_range_is_refused(value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "apiserver", "--etcd-endpoints", "http://127.0.0.1:2379",
                           "--workers", value], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--workers: must be between 1 and 64" in done.stderr
