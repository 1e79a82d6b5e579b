"""Simulated nodes: exec, attach and port-forward through the API server with the real kubectl.

The simulated kubelet speaks every protocol itself, WebSocket v5 and the port-forward tunnel
included, so this shows what kubectl 1.30+ does when the node accepts its first choice, while
test_streaming_cri shows real containers. Each version: exec returns output and exit code,
stdin reaches the command, port-forward serves two ports, attach echoes what it is sent;
pkctl's exec and port-forward reach a Deployment's pod as kubectl's do; kr8s and kubernetes_asyncio exec.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.kubectl import kubectl_binary
from kube.testing.ports import free_port
from tests.e2e.streaming_helpers import background, http_get, run_kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")
VERSIONS = [27, 30, 36]


@pytest.fixture(scope="module")
def pod(cluster: Cluster) -> str:
    """A running pod in namespace `streaming`; its namespace."""
    ns = "streaming"
    cluster.kubectl_ok("create", "namespace", ns)
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": ns},
                           "spec": {"containers": [{"name": "app", "image": "busybox", "stdin": True}]}}
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))
    cluster.kubectl_ok("wait", "--for=condition=Ready", "pod/web", "-n", ns, "--timeout=60s")
    return ns


@pytest.mark.parametrize("minor", VERSIONS)
def test_exec_output_exit_code_and_stdin(cluster: Cluster, pod: str, minor: int) -> None:
    kubectl = kubectl_binary(minor)
    out = run_kubectl(cluster, kubectl, "exec", "web", "-n", pod, "--", "sh", "-c", "echo hi; exit 3")
    assert (out.stdout, out.returncode) == ("hi\n", 3), out
    out = run_kubectl(cluster, kubectl, "exec", "-i", "web", "-n", pod, "--", "cat", stdin="through stdin\n")
    assert (out.stdout, out.returncode) == ("through stdin\n", 0), out


@pytest.mark.parametrize("minor", VERSIONS)
def test_port_forward_two_ports(cluster: Cluster, pod: str, minor: int) -> None:
    ports = [free_port(), free_port()]
    with background(cluster, kubectl_binary(minor), "port-forward", "-n", pod, "pod/web", f"{ports[0]}:80",
                    f"{ports[1]}:8443"):
        eventually_sync(lambda: http_get(ports[0], "/a"), timeout=30, interval=0.3, message="port-forward answers")
        assert [http_get(ports[0], "/a") for _ in range(3)] == [f"{pod}/web:80 GET /a\n"] * 3
        assert http_get(ports[1], "/b") == f"{pod}/web:8443 GET /b\n"


@pytest.mark.parametrize("minor", VERSIONS)
def test_attach_echoes_stdin(cluster: Cluster, pod: str, minor: int) -> None:
    with background(cluster, kubectl_binary(minor), "attach", "-i", "web", "-n", pod) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"attached-{minor}\n")
        proc.stdin.flush()
        lines: list[str] = []

        def echoed() -> bool:
            assert proc.stdout is not None
            lines.append(proc.stdout.readline())
            return f"attached-{minor}\n" in lines
        eventually_sync(echoed, timeout=30, interval=0, message="attach echoes stdin")


def test_exec_without_an_upgrade_or_a_host_is_refused_with_upstreams_words(cluster: Cluster, pod: str) -> None:
    out = cluster.kubectl("create", "--raw", f"/api/v1/namespaces/{pod}/pods/web/exec?command=true&stdout=true",
                          "-f", "/dev/null")
    assert "Upgrade request required" in out.stderr, out
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nowhere", "namespace": pod},
           "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "app", "image": "busybox"}]}}
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))
    out = cluster.kubectl("exec", "nowhere", "-n", pod, "--", "true")
    assert out.returncode != 0 and "pod nowhere does not have a host assigned" in out.stderr, out


def test_pkctl_exec_and_port_forward_reach_a_deployments_pod(cluster: Cluster, pod: str) -> None:
    cluster.kubectl_ok("create", "deployment", "shop", "-n", pod, "--image=busybox")
    cluster.kubectl_ok("rollout", "status", "deployment/shop", "-n", pod, "--timeout=60s")
    out = cluster.pkctl("exec", "-n", pod, "deploy/shop", "--", "sh", "-c", "echo hi; exit 3")
    assert (out.stdout, out.returncode) == ("hi\n", 3), out
    assert "command terminated with exit code 3" in out.stderr, out
    out = cluster.pkctl("exec", "-i", "-n", pod, "web", "--", "cat", stdin="piped\n")
    assert (out.stdout, out.returncode) == ("piped\n", 0), out
    out = cluster.pkctl("exec", "-n", pod, "svc/kubernetes", "--", "true")
    assert out.returncode == 1 and "cannot exec into a Service" in out.stderr, out
    port = free_port()
    with background(cluster, [sys.executable, "-m", "kubectl"], "port-forward", "-n", pod, "deploy/shop",
                    f"{port}:8080"):
        body = eventually_sync(lambda: http_get(port, "/p"), timeout=30, interval=0.3, message="pkctl forwards")
        assert body is not None and body.startswith(f"{pod}/shop-") and body.endswith(":8080 GET /p\n"), body


async def test_kr8s_and_kubernetes_asyncio_exec(cluster: Cluster, pod: str) -> None:
    import kr8s.asyncio
    from kubernetes_asyncio import client, config
    from kubernetes_asyncio.stream import WsApiClient

    api = await kr8s.asyncio.api(kubeconfig=str(cluster.kubeconfig))
    web = await kr8s.asyncio.objects.Pod.get("web", namespace=pod, api=api)
    done = await web.exec(["sh", "-c", "echo hi; echo oops >&2; exit 3"], check=False)
    assert (done.stdout, done.stderr, done.returncode) == (b"hi\n", b"oops\n", 3)

    await config.load_kube_config(config_file=str(cluster.kubeconfig))
    # Its generated signature says `command: str`; a list is what it sends as repeated `command` parameters.
    command: Any = ["sh", "-c", "echo from asyncio"]
    async with WsApiClient() as ws:
        out = await client.CoreV1Api(api_client=ws).connect_get_namespaced_pod_exec(
            "web", pod, command=command, stdout=True, stderr=True, stdin=False, tty=False)
    assert out == "from asyncio\n"
