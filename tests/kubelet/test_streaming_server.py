"""The kubelet's /exec, /attach and /portForward on a simulated node, reached as the API server
reaches them: over TLS with the API server's kubelet-client certificate, in every protocol a
client may ask for (WebSocket channel protocols v1-v5, SPDY/3.1, the port-forward channels and
the SPDY tunnel), with upstream's errors before any upgrade."""

from __future__ import annotations

import asyncio
import json
import ssl
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import pytest_asyncio
import websocket

from kube.client.config import ClientConfig
from kube.client.websocket import ChannelWebSocket, connect_websocket
from kube.errors import ApiError
from kube.testing.eventually import eventually
from kubelet.cri.interface import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    ContainerConfig,
    PodSandboxConfig,
)
from kubelet.cri.simulated import SimulatedRuntime
from kubelet.logs import ContainerLogSource
from kubelet.server import KubeletServer
from kubelet.streaming import ProtocolStreamingHandler
from kubelet.streaming.simulated import SimulatedStreamingRuntime
from kubelet.streaming.spdy import Data, FrameDecoder, FrameEncoder, SynReply, SynStream
from picokube.credentials import issue_credentials
from tests.kubelet.spdy_client import SpdyClient

pytestmark = pytest.mark.timeout(60)


@dataclass
class Node:
    port: int
    pki: Path
    runtime: SimulatedRuntime

    def config(self, *, cert: bool = True) -> ClientConfig:
        return ClientConfig(server=f"https://127.0.0.1:{self.port}", ca_data=(self.pki / "ca.crt").read_bytes(),
                            client_cert_data=(self.pki / "apiserver-kubelet-client.crt").read_bytes() if cert else None,
                            client_key_data=(self.pki / "apiserver-kubelet-client.key").read_bytes() if cert else None)

    def ssl(self) -> ssl.SSLContext:
        ctx = self.config().ssl_context()
        assert isinstance(ctx, ssl.SSLContext)
        return ctx

    def sslopt(self) -> dict[str, Any]:
        return {"ca_certs": str(self.pki / "ca.crt"), "certfile": str(self.pki / "apiserver-kubelet-client.crt"),
                "keyfile": str(self.pki / "apiserver-kubelet-client.key")}


async def _container(rt: SimulatedRuntime, sandbox: str, sb_config: PodSandboxConfig, name: str,
                     command: tuple[str, ...] = ()) -> str:
    labels = {**sb_config.labels, CONTAINER_NAME_LABEL: name}
    cid = await rt.create_container(sandbox, ContainerConfig(name=name, image="busybox", command=command,
                                                             env={"GREETING": "hello"}, labels=labels), sb_config)
    await rt.start_container(cid)
    return cid


@pytest_asyncio.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    issue_credentials(tmp_path, server="https://127.0.0.1:6443", nodes={"node-1": ["127.0.0.1"]})
    pki = tmp_path / "pki"
    rt = SimulatedRuntime()
    labels = {POD_NAME_LABEL: "web", POD_NAMESPACE_LABEL: "default", POD_UID_LABEL: "uid-1"}
    sb_config = PodSandboxConfig(name="web", namespace="default", uid="uid-1", labels=labels)
    sandbox = await rt.run_pod_sandbox(sb_config)
    await rt.pull_image("busybox")
    await _container(rt, sandbox, sb_config, "main", ("sh", "-c", "sleep 1; echo later; sleep infinity"))
    await _container(rt, sandbox, sb_config, "done", ("sh", "-c", "exit 0"))
    server = KubeletServer(ContainerLogSource(rt), address="127.0.0.1", port=0,
                           cert_file=str(pki / "kubelet-node-1.crt"), key_file=str(pki / "kubelet-node-1.key"),
                           client_ca_file=str(pki / "ca.crt"),
                           streaming=ProtocolStreamingHandler(SimulatedStreamingRuntime(rt)))
    port = server.bind()
    task = asyncio.create_task(server.serve())
    await asyncio.sleep(0.3)
    try:
        yield Node(port, pki, rt)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def exec_params(*command: str, stdin: bool = False, tty: bool = False) -> list[tuple[str, str]]:
    params = [("command", c) for c in command] + [("output", "1"), ("error", "1")]
    return params + ([("input", "1")] if stdin else []) + ([("tty", "1")] if tty else [])


async def collect(ws: ChannelWebSocket) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    while (message := await asyncio.wait_for(ws.receive(), 10)) is not None:
        out[message[0]] = out.get(message[0], b"") + message[1]
    return out


# --- exec over WebSocket ----------------------------------------------------------------------
async def test_v5_exec_prints_and_exits_with_the_scripts_code(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main",
                                 exec_params("sh", "-c", "echo hi; echo oops >&2; exit 3"), ["v5.channel.k8s.io"])
    assert ws.subprotocol == "v5.channel.k8s.io"
    out = await collect(ws)
    assert out[1] == b"hi\n" and out[2] == b"oops\n"
    assert json.loads(out[3]) == {
        "metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
        "message": "command terminated with non-zero exit code: command 'sh -c echo hi; echo oops >&2; exit 3' "
                   "exited with 3",
        "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}}


async def test_v5_stdin_is_closed_by_the_close_signal(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main", exec_params("cat", stdin=True),
                                 ["v5.channel.k8s.io", "v4.channel.k8s.io"])
    await ws.send(0, b"line one\n")
    await ws.send(0, b"line two\n")
    await ws.close_channel(0)
    out = await collect(ws)
    assert out[1] == b"line one\nline two\n"
    assert json.loads(out[3]) == {"metadata": {}, "status": "Success"}


async def test_v4_success_status_and_the_containers_environment(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main", exec_params("sh", "-c", "echo $GREETING"),
                                 ["v4.channel.k8s.io"])
    out = await collect(ws)
    assert out[1] == b"hello\n"
    assert json.loads(out[3])["status"] == "Success"


async def test_v1_channel_protocol_reports_only_failures_as_text(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main", exec_params("false"), ["channel.k8s.io"])
    out = await collect(ws)
    assert out[3].startswith(b"command terminated with non-zero exit code")


async def test_base64_protocol_encodes_every_message(node: Node) -> None:
    def run() -> list[str]:
        ws = websocket.WebSocket(sslopt=node.sslopt())
        ws.connect(f"wss://127.0.0.1:{node.port}/exec/default/web/main?command=hostname&output=1",
                   subprotocols=["v4.base64.channel.k8s.io"])
        messages: list[str] = []
        while True:
            op, data = ws.recv_data()
            if op == websocket.ABNF.OPCODE_CLOSE:
                return messages
            messages.append(data.decode())
    messages = await asyncio.to_thread(run)
    assert "1d2ViCg==" in messages  # "web\n" on channel '1'
    assert any(m.startswith("3") for m in messages)


async def test_an_unknown_program_is_an_internal_error_not_an_exit_code(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main", exec_params("nginx"), ["v5.channel.k8s.io"])
    status = json.loads((await collect(ws))[3])
    assert status["reason"] == "InternalError" and status["code"] == 500
    assert 'exec: "nginx": executable file not found in $PATH' in status["message"]


async def test_tty_session_merges_stderr_and_reads_resizes(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/exec/default/web/main", exec_params("sh", stdin=True, tty=True),
                                 ["v5.channel.k8s.io"])
    await ws.send(4, b'{"Width":100,"Height":30}')
    await ws.send(0, b"echo hi >&2\rexit 4\r")
    out = await collect(ws)
    assert b"/ # " in out[1] and b"hi\r\n" in out[1] and 2 not in out
    assert json.loads(out[3])["details"]["causes"][0]["message"] == "4"


# --- errors before the upgrade -----------------------------------------------------------------
@pytest.mark.parametrize(("path", "code", "message"), [
    ("/exec/default/nope/main", 404, "pod does not exist"),
    ("/exec/default/web/other", 404, 'container not found ("other")'),
    ("/exec/default/web/done", 400, 'container "done" in pod "web" is not running'),
])
async def test_unknown_targets_are_refused_before_upgrading(node: Node, path: str, code: int, message: str) -> None:
    with pytest.raises(ApiError) as e:
        await connect_websocket(node.config(), path, exec_params("true"), ["v5.channel.k8s.io"])
    assert e.value.code == code and e.value.message == message


async def test_exec_needs_a_stream(node: Node) -> None:
    with pytest.raises(ApiError, match="you must specify at least 1 of stdin, stdout, stderr"):
        await connect_websocket(node.config(), "/exec/default/web/main", [("command", "true")], ["v5.channel.k8s.io"])


async def test_a_client_without_the_api_servers_certificate_is_refused(node: Node) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        ws = await connect_websocket(node.config(cert=False), "/exec/default/web/main", exec_params("true"),
                                     ["v5.channel.k8s.io"])
        await collect(ws)


# --- exec and attach over SPDY ------------------------------------------------------------------
async def test_spdy_v4_exec_with_stdin_and_exit_code(node: Node) -> None:
    q = "command=sh&command=-c&command=" + quote("cat; echo done >&2; exit 3") + "&input=1&output=1&error=1"
    client = await SpdyClient.connect(node.port, f"/exec/default/web/main?{q}", node.ssl(),
                                      protocols=["v4.channel.k8s.io", "v3.channel.k8s.io", "channel.k8s.io"])
    try:
        assert client.status == 101
        assert client.head["upgrade"] == "SPDY/3.1"
        assert client.head["x-stream-protocol-version"] == "v4.channel.k8s.io"
        error = await client.open({"streamtype": "error"})
        stdin = await client.open({"streamtype": "stdin"})
        stdout = await client.open({"streamtype": "stdout"})
        stderr = await client.open({"streamtype": "stderr"})
        await client.write(stdin, b"from stdin\n", fin=True)
        assert await client.read_all(stdout) == b"from stdin\n"
        assert await client.read_all(stderr) == b"done\n"
        status = json.loads(await client.read_all(error))
        assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"][0]["message"] == "3"
        await asyncio.wait_for(client.goaway.wait(), 5)
    finally:
        await client.close()


async def test_spdy_attach_echoes_stdin_and_follows_new_output(node: Node) -> None:
    client = await SpdyClient.connect(node.port, "/attach/default/web/main?input=1&output=1", node.ssl(),
                                      protocols=["v4.channel.k8s.io"])
    try:
        await client.open({"streamtype": "error"})
        stdin = await client.open({"streamtype": "stdin"})
        stdout = await client.open({"streamtype": "stdout"})
        await client.write(stdin, b"ping\n")

        async def seen() -> bool:
            data = client.data.get(stdout, b"")
            return b"ping\n" in data and b"later\n" in data
        await eventually(seen, timeout=10, message="attach shows the echo and the new log line")
    finally:
        await client.close()


async def test_spdy_upgrade_errors_read_as_upstreams(node: Node) -> None:
    refused = await SpdyClient.connect(node.port, "/exec/default/web/main?command=true&output=1", node.ssl(),
                                       protocols=["v9.channel.k8s.io"])
    assert refused.status == 403
    assert refused.body.startswith(b"unable to upgrade: unable to negotiate protocol: client supports")
    assert refused.head["x-accepted-stream-protocol-versions"] == \
        "v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io"
    await refused.close()
    plain = await SpdyClient.connect(node.port, "/exec/default/web/main?command=true&output=1", node.ssl(),
                                     protocols=["v4.channel.k8s.io"], upgrade=False)
    assert plain.status == 400 and plain.body.startswith(b"unable to upgrade: missing upgrade headers in request")
    await plain.close()


# --- port-forward ----------------------------------------------------------------------------
async def test_websocket_port_forward_answers_http(node: Node) -> None:
    ws = await connect_websocket(node.config(), "/portForward/default/web", [("port", "8080")],
                                 ["v5.channel.k8s.io", "v4.channel.k8s.io"])
    assert ws.subprotocol == "v4.channel.k8s.io"
    assert await ws.receive() == (0, struct.pack("<H", 8080))
    assert await ws.receive() == (1, struct.pack("<H", 8080))
    await ws.send(0, b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /again HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while got.count(b"200 OK") < 2:
        message = await asyncio.wait_for(ws.receive(), 5)
        assert message is not None and message[0] == 0
        got += message[1]
    assert b"default/web:8080 GET /hello\n" in got and b"default/web:8080 GET /again\n" in got
    await ws.close()


async def test_spdy_port_forward_carries_several_connections(node: Node) -> None:
    client = await SpdyClient.connect(node.port, "/portForward/default/web", node.ssl(),
                                      protocols=["portforward.k8s.io"])
    try:
        assert client.status == 101 and client.head["x-stream-protocol-version"] == "portforward.k8s.io"
        for request_id, port in enumerate((80, 443)):
            error = await client.open({"streamtype": "error", "port": str(port), "requestid": str(request_id)})
            data = await client.open({"streamtype": "data", "port": str(port), "requestid": str(request_id)})
            await client.write(data, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", fin=True)
            assert (await client.read_all(data)).endswith(f"default/web:{port} GET /\n".encode())
            assert await client.read_all(error) == b""
    finally:
        await client.close()


async def test_port_forward_tunnelled_in_a_websocket_echoes(node: Node) -> None:
    def run() -> bytes:
        ws = websocket.WebSocket(sslopt=node.sslopt())
        ws.connect(f"wss://127.0.0.1:{node.port}/portForward/default/web",
                   subprotocols=["SPDY/3.1+portforward.k8s.io"])
        encoder, decoder = FrameEncoder(), FrameDecoder()
        for sid, kind in ((1, "error"), (3, "data")):
            ws.send_binary(encoder.encode(SynStream(sid, {"streamtype": [kind], "port": ["9000"],
                                                          "requestid": ["0"]})))
        ws.send_binary(encoder.encode(Data(3, b"raw bytes")))
        got = b""
        while got != b"raw bytes":
            for frame in decoder.feed(ws.recv_data()[1]):
                if isinstance(frame, Data) and frame.stream_id == 3:
                    got += frame.data
                else:
                    assert isinstance(frame, SynReply | Data)
        ws.close()
        return got
    assert await asyncio.to_thread(run) == b"raw bytes"


async def test_other_paths_still_reach_the_app(node: Node) -> None:
    async with httpx.AsyncClient(verify=node.ssl()) as client:
        logs = await client.get(f"https://127.0.0.1:{node.port}/containerLogs/default/web/main")
        assert logs.status_code == 200 and logs.text.startswith("started main with image busybox")
        assert (await client.get(f"https://127.0.0.1:{node.port}/healthz")).text == "ok"
