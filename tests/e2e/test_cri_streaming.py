"""exec, attach and port-forward on a real node: the kubelet relays to containerd's streaming server.

One `picokube up --runtime cri` node runs busybox pods in runc; the tests reach the kubelet's
/exec, /attach and /portForward directly, as the API server does (TLS with its
kubelet-client certificate), with the SPDY and WebSocket clients of the repository.
containerd 1.6 speaks SPDY/3.1 and the WebSocket channel protocols up to v4: a client
offering v5 first gets v4 (and one offering only v5 is refused, so real kubectl falls back
to SPDY). Needs root, containerd, runc, the CNI plugins and busybox-static.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from kube.client.config import ClientConfig
from kube.client.websocket import ChannelWebSocket, connect_websocket
from kube.errors import ApiError
from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually, eventually_sync
from picokube.containerd import containerd_available
from tests.kubelet.spdy_client import SpdyClient

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.cri, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no CRI runtime: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "cri")
NS = "default"

PODS = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: {NS}}}
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
  - name: ticker
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "while true; do echo tick; sleep 0.5; done"]
"""


@dataclass(frozen=True)
class Kubelet:
    address: str
    port: int
    config: ClientConfig

    def ssl(self) -> ssl.SSLContext:
        ctx = self.config.ssl_context()
        assert isinstance(ctx, ssl.SSLContext)
        return ctx


@pytest.fixture(scope="module")
def kubelet(cluster: Cluster) -> Iterator[Kubelet]:
    cluster.kubectl_ok("apply", "-f", "-", stdin=PODS)

    def running() -> bool:
        pod = json.loads(cluster.kubectl_ok("get", "pod", "web", "-n", NS, "-o", "json"))
        return pod["status"].get("phase") == "Running" and all(
            c.get("ready") for c in pod["status"].get("containerStatuses", [{}]))
    eventually_sync(running, timeout=90, interval=0.3, message="pod web Running and Ready")
    node: dict[str, Any] = json.loads(cluster.kubectl_ok("get", "node", "node-1", "-o", "json"))
    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    port = int(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])
    pki = cluster.data_dir / "pki"
    config = ClientConfig(server=f"https://{address}:{port}", ca_data=(pki / "ca.crt").read_bytes(),
                          client_cert_data=(pki / "apiserver-kubelet-client.crt").read_bytes(),
                          client_key_data=(pki / "apiserver-kubelet-client.key").read_bytes())
    try:
        yield Kubelet(address, port, config)
    finally:
        cluster.kubectl("delete", "pod", "web", "-n", NS, "--wait=false")


def exec_params(*command: str, stdin: bool = False, tty: bool = False) -> list[tuple[str, str]]:
    params = [("command", c) for c in command] + [("output", "1"), ("error", "1")]
    return params + ([("input", "1")] if stdin else []) + ([("tty", "1")] if tty else [])


async def collect(ws: ChannelWebSocket) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    while (message := await asyncio.wait_for(ws.receive(), 20)) is not None:
        out[message[0]] = out.get(message[0], b"") + message[1]
    return out


async def spdy(kubelet: Kubelet, path: str, protocols: list[str]) -> SpdyClient:
    client = await SpdyClient.connect(kubelet.port, path, kubelet.ssl(), protocols=protocols)
    assert client.status == 101, client.body
    return client


# --- exec -----------------------------------------------------------------------------------------
async def test_websocket_exec_gets_v4_stdout_and_the_exit_code(kubelet: Kubelet) -> None:
    ws = await connect_websocket(kubelet.config, f"/exec/{NS}/web/app", exec_params("sh", "-c", "echo hi; exit 3"),
                                 ["v5.channel.k8s.io", "v4.channel.k8s.io"])
    assert ws.subprotocol == "v4.channel.k8s.io"
    out = await collect(ws)
    assert out[1] == b"hi\n"
    status = json.loads(out[3])
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]


async def test_websocket_v5_alone_is_refused_by_containerd(kubelet: Kubelet) -> None:
    """A 403 on the upgrade: what kubectl's fallback executor retries over SPDY."""
    with pytest.raises(ApiError) as e:
        await connect_websocket(kubelet.config, f"/exec/{NS}/web/app", exec_params("true"), ["v5.channel.k8s.io"])
    assert e.value.code == 403


async def test_spdy_exec_carries_stdin_stdout_stderr_and_the_exit_code(kubelet: Kubelet) -> None:
    q = "command=sh&command=-c&command=" + quote("cat; echo done >&2; exit 4") + "&input=1&output=1&error=1"
    client = await spdy(kubelet, f"/exec/{NS}/web/app?{q}", ["v4.channel.k8s.io", "v3.channel.k8s.io"])
    try:
        assert client.head["x-stream-protocol-version"] == "v4.channel.k8s.io"
        error = await client.open({"streamtype": "error"})
        stdin = await client.open({"streamtype": "stdin"})
        stdout = await client.open({"streamtype": "stdout"})
        stderr = await client.open({"streamtype": "stderr"})
        payload = b"".join(b"line %d\n" % i for i in range(5000))
        await client.write(stdin, payload, fin=True)
        assert await client.read_all(stdout, timeout=30) == payload
        assert await client.read_all(stderr) == b"done\n"
        status = json.loads(await client.read_all(error))
        assert status["details"]["causes"][0]["message"] == "4"
    finally:
        await client.close()


async def test_exec_with_a_tty_and_the_applets_kubectl_needs(kubelet: Kubelet) -> None:
    script = "tty; stty -g >/dev/null && echo stty; cd /tmp && echo x > f && tar cf - f | tar tf - && pwd"
    ws = await connect_websocket(kubelet.config, f"/exec/{NS}/web/app",
                                 exec_params("sh", "-c", script, stdin=True, tty=True), ["v4.channel.k8s.io"])
    out = await collect(ws)
    lines = out[1].decode().split("\r\n")
    assert lines[0].startswith("/dev/pts/"), out
    assert lines[1:4] == ["stty", "f", "/tmp"], out
    assert json.loads(out[3])["status"] == "Success"


async def test_an_interactive_shell_sees_the_terminal_resized(kubelet: Kubelet) -> None:
    ws = await connect_websocket(kubelet.config, f"/exec/{NS}/web/app", exec_params("sh", stdin=True, tty=True),
                                 ["v4.channel.k8s.io"])
    seen = bytearray()

    async def read() -> None:
        while (message := await ws.receive()) is not None:
            seen.extend(message[1] if message[0] == 1 else b"")
    reader = asyncio.create_task(read())
    try:
        await ws.send(4, b'{"Width":123,"Height":45}')

        async def resized() -> bool:
            if b"45 123\r\n" in seen:
                return True
            await ws.send(0, b"stty size\r")  # again: the resize and a line race inside containerd
            return False
        await eventually(resized, timeout=10, interval=0.3, message="stty size shows the new 45 rows, 123 columns")
        await ws.send(0, b"exit 0\r")
        await asyncio.wait_for(reader, 10)
    finally:
        reader.cancel()
        await ws.close()


# --- attach ---------------------------------------------------------------------------------------
async def test_spdy_attach_follows_the_containers_output(kubelet: Kubelet) -> None:
    client = await spdy(kubelet, f"/attach/{NS}/web/ticker?output=1&error=1", ["v4.channel.k8s.io"])
    try:
        await client.open({"streamtype": "error"})
        stdout = await client.open({"streamtype": "stdout"})
        await client.open({"streamtype": "stderr"})

        async def ticks() -> bool:
            return client.data.get(stdout, b"").count(b"tick\n") >= 2
        await eventually(ticks, timeout=10, message="attach shows the ticker's new lines")
    finally:
        await client.close()


# --- port-forward ---------------------------------------------------------------------------------
async def test_spdy_port_forward_reaches_httpd_in_the_pod(kubelet: Kubelet) -> None:
    client = await spdy(kubelet, f"/portForward/{NS}/web", ["portforward.k8s.io"])
    try:
        for request_id in range(2):
            error = await client.open({"streamtype": "error", "port": "8080", "requestid": str(request_id)})
            data = await client.open({"streamtype": "data", "port": "8080", "requestid": str(request_id)})
            await client.write(data, b"GET /index.html HTTP/1.0\r\n\r\n", fin=True)
            response = await client.read_all(data)
            assert response.startswith(b"HTTP/1.") and b" 200 " in response.split(b"\r\n")[0], response
            assert response.endswith(b"hello from picokube\n")
            assert await client.read_all(error) == b""
    finally:
        await client.close()


async def test_websocket_port_forward_reaches_httpd_in_the_pod(kubelet: Kubelet) -> None:
    ws = await connect_websocket(kubelet.config, f"/portForward/{NS}/web", [("port", "8080")],
                                 ["v4.channel.k8s.io"])
    try:
        assert await ws.receive() == (0, struct.pack("<H", 8080))
        assert await ws.receive() == (1, struct.pack("<H", 8080))
        await ws.send(0, b"GET /index.html HTTP/1.0\r\n\r\n")
        got = b""
        while not got.endswith(b"hello from picokube\n"):
            message = await asyncio.wait_for(ws.receive(), 10)
            assert message is not None, got
            if message[0] == 0:
                got += message[1]
        assert b" 200 " in got.split(b"\r\n")[0]
    finally:
        await ws.close()


# --- errors before any upgrade --------------------------------------------------------------------
@pytest.mark.parametrize(("path", "params", "code", "message"), [
    (f"/exec/{NS}/web/missing", exec_params("true"), 404, 'container not found ("missing")'),
    (f"/exec/{NS}/nope/app", exec_params("true"), 404, "pod does not exist"),
    (f"/exec/{NS}/web/app", [("output", "1")], 400, "you must specify at least one command for the container"),
    (f"/portForward/{NS}/nope", [("port", "8080")], 404, "pod does not exist"),
])
async def test_refusals_come_before_the_upgrade(kubelet: Kubelet, path: str, params: list[tuple[str, str]],
                                                code: int, message: str) -> None:
    with pytest.raises(ApiError) as e:
        await connect_websocket(kubelet.config, path, params, ["v4.channel.k8s.io"])
    assert (e.value.code, e.value.message) == (code, message)


async def test_a_request_that_is_not_an_upgrade_is_refused(kubelet: Kubelet) -> None:
    client = await SpdyClient.connect(kubelet.port, f"/exec/{NS}/web/app?command=true&output=1", kubelet.ssl(),
                                      protocols=["v4.channel.k8s.io"], upgrade=False)
    try:
        assert (client.status, client.body) == (500, b"Upgrade request required\n")
    finally:
        await client.close()
