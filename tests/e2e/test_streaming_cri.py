"""Real containers: exec, attach, cp, port-forward, run -it, debug and the proxies, with the real kubectl.

One CRI node (`picokube up --runtime cri`). Every command goes kubectl → API server (authorized,
then relayed over mutual TLS) → kubelet → containerd's streaming server → the container, with
kubectl 1.27 (SPDY), 1.30 and 1.36 (WebSocket first, falling back to SPDY where the runtime
does not speak the newer protocol). Interactive commands run under tmux, a real pseudo-terminal.
Needs root, containerd, runc, the CNI plugins, busybox-static and tmux; in CI a skip is a failure.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.kubectl import kubectl_binary
from kube.testing.ports import free_port
from picokube.containerd import containerd_available
from tests.e2e.streaming_helpers import Terminal, background, http_get, run_kubectl

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.cri, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no real nodes: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "cri")
VERSIONS = [27, 30, 36]
SERVE = ("mkdir -p /www/a /www/b && echo page-a > /www/a/index.html && echo page-b > /www/b/index.html && "
         "httpd -p 8080 -h /www/a && httpd -p 8081 -h /www/b && exec sleep 3600")


def apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))


def busybox(name: str, ns: str, command: str, **container: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                "name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", command], **container}]}}


def running(cluster: Cluster, ns: str, name: str) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        p: dict[str, Any] = json.loads(cluster.kubectl_ok("get", "pod", name, "-n", ns, "-o", "json"))
        ok = p["status"].get("phase") == "Running" and all(
            c.get("ready") for c in p["status"].get("containerStatuses") or [{}])
        return p if ok else None
    return eventually_sync(ready, timeout=120, interval=0.3, message=f"{name} Running")


@pytest.fixture(scope="module")
def web(cluster: Cluster) -> str:
    """A namespace with a busybox pod serving two httpd ports; its name."""
    ns = "streaming"
    cluster.kubectl_ok("create", "namespace", ns)
    apply(cluster, busybox("web", ns, SERVE, ports=[{"containerPort": 8080}, {"containerPort": 8081}]))
    running(cluster, ns, "web")
    return ns


@pytest.mark.parametrize("minor", VERSIONS)
def test_exec_prints_output_and_returns_the_exit_code(cluster: Cluster, web: str, minor: int) -> None:
    out = run_kubectl(cluster, kubectl_binary(minor), "exec", "web", "-n", web, "--", "sh", "-c", "echo hi; exit 3")
    assert out.stdout == "hi\n" and out.returncode == 3, out


@pytest.mark.parametrize("minor", VERSIONS)
def test_exec_with_stdin(cluster: Cluster, web: str, minor: int) -> None:
    out = run_kubectl(cluster, kubectl_binary(minor), "exec", "-i", "web", "-n", web, "--", "sh", "-c",
                      "tr a-z A-Z; echo done", stdin="hello\nworld\n")
    assert out.returncode == 0 and out.stdout == "HELLO\nWORLD\ndone\n", out


@pytest.mark.parametrize("minor", VERSIONS)
def test_exec_it_under_a_terminal(cluster: Cluster, web: str, minor: int) -> None:
    term = Terminal(cluster, [str(kubectl_binary(minor)), "exec", "-it", "web", "-n", web, "--", "sh"], rows=33,
                    cols=101)
    try:
        term.wait_for("#")
        term.type("echo $((6*7)) && tty")
        screen = term.wait_for("/dev/pts/")
        assert "42" in screen, screen

        # kubectl sends the window size on the resize channel beside the stream, so the
        # shell may start before it lands: ask until the terminal's size is the pane's.
        def sized() -> bool:
            if "33 101" in term.screen():
                return True
            term.type("stty size")
            return False
        eventually_sync(sized, timeout=30, interval=0.5, message="the pane's size reaches the container")
        term.type("exit 5")
        term.wait_for("EXITED=5")
    finally:
        term.close()


@pytest.mark.parametrize("minor", VERSIONS)
def test_cp_both_ways(cluster: Cluster, web: str, minor: int, tmp_path: Path) -> None:
    kubectl = kubectl_binary(minor)
    source = tmp_path / "in.txt"
    source.write_text(f"copied by {minor}\n" * 1000)
    out = run_kubectl(cluster, kubectl, "cp", str(source), f"{web}/web:/tmp/in-{minor}.txt")
    assert out.returncode == 0, out
    out = run_kubectl(cluster, kubectl, "exec", "web", "-n", web, "--", "md5sum", f"/tmp/in-{minor}.txt")
    assert out.returncode == 0, out
    assert out.stdout.split()[0] == hashlib.md5(source.read_bytes()).hexdigest()
    back = tmp_path / "out.txt"
    out = run_kubectl(cluster, kubectl, "cp", f"{web}/web:/tmp/in-{minor}.txt", str(back))
    assert out.returncode == 0, out
    assert back.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("minor", VERSIONS)
def test_port_forward_two_ports_and_several_requests(cluster: Cluster, web: str, minor: int) -> None:
    ports = [free_port(), free_port()]
    with background(cluster, kubectl_binary(minor), "port-forward", "-n", web, "pod/web",
                    f"{ports[0]}:8080", f"{ports[1]}:8081"):
        assert eventually_sync(lambda: http_get(ports[0]), timeout=30, interval=0.3,
                               message="port-forward answers") == "page-a\n"
        assert [http_get(ports[0]) for _ in range(5)] == ["page-a\n"] * 5
        assert [http_get(ports[1]) for _ in range(5)] == ["page-b\n"] * 5


@pytest.mark.parametrize("minor", VERSIONS)
def test_attach_to_a_running_process(cluster: Cluster, web: str, minor: int) -> None:
    name = f"cat-{minor}"
    apply(cluster, busybox(name, web, "echo ready; exec cat", stdin=True))
    running(cluster, web, name)
    with background(cluster, kubectl_binary(minor), "attach", "-i", name, "-n", web) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"echoed-by-{minor}\n")
        proc.stdin.flush()
        lines: list[str] = []

        def seen() -> bool:
            assert proc.stdout is not None
            lines.append(proc.stdout.readline())
            return f"echoed-by-{minor}\n" in lines
        eventually_sync(seen, timeout=30, interval=0, message="the attached process echoes stdin")


@pytest.mark.parametrize("minor", VERSIONS)
def test_run_it_rm_runs_interactively_and_deletes_the_pod(cluster: Cluster, web: str, minor: int) -> None:
    name = f"run-{minor}"
    term = Terminal(cluster, [str(kubectl_binary(minor)), "run", name, "-n", web, "-it", "--rm", "--restart=Never",
                              "--image=busybox", "--image-pull-policy=IfNotPresent", "--", "sh"])
    try:
        term.wait_for("#", timeout=90)
        term.type("echo $((7*8))")
        term.wait_for("56")
        term.type("exit")
        term.wait_for("EXITED=0", timeout=90)
    finally:
        term.close()
    eventually_sync(lambda: cluster.kubectl("get", "pod", name, "-n", web).returncode != 0, timeout=60,
                    interval=0.5, message=f"{name} deleted")


@pytest.mark.parametrize("minor", VERSIONS)
def test_debug_adds_an_ephemeral_container_sharing_the_target(cluster: Cluster, web: str, minor: int) -> None:
    term = Terminal(cluster, [str(kubectl_binary(minor)), "debug", "-it", "web", "-n", web, "--image=busybox",
                              "--image-pull-policy=IfNotPresent", "--target=app", f"--container=dbg-{minor}",
                              "--", "sh"])
    try:
        term.wait_for("#", timeout=90)
        term.type("ps -o comm | grep -c httpd")  # the target's processes are visible
        term.wait_for("\n2\n")
        term.type("exit")
        term.wait_for("EXITED=", timeout=60)
    finally:
        term.close()
    pod = json.loads(cluster.kubectl_ok("get", "pod", "web", "-n", web, "-o", "json"))
    assert f"dbg-{minor}" in [c["name"] for c in pod["spec"]["ephemeralContainers"]]
    assert f"dbg-{minor}" in [c["name"] for c in pod["status"]["ephemeralContainerStatuses"]]


def ephemeral_state(cluster: Cluster, ns: str, pod: str, container: str, state: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        p = json.loads(cluster.kubectl_ok("get", "pod", pod, "-n", ns, "-o", "json"))
        for cs in p["status"].get("ephemeralContainerStatuses") or []:
            if cs["name"] == container and state in cs["state"]:
                return dict(cs)
        return None
    return eventually_sync(reached, timeout=90, interval=0.3, message=f"{container} {state}")


def test_an_ephemeral_container_with_a_target_sees_its_processes(cluster: Cluster, web: str) -> None:
    patch = {"spec": {"ephemeralContainers": [{
        "name": "peek", "image": "busybox", "imagePullPolicy": "IfNotPresent", "targetContainerName": "app",
        "command": ["sleep", "3600"]}]}}
    cluster.kubectl_ok("patch", "pod", "web", "-n", web, "--subresource=ephemeralcontainers", "--type=strategic",
                       "-p", json.dumps(patch))
    status = ephemeral_state(cluster, web, "web", "peek", "running")
    assert status["ready"] is False and status["restartCount"] == 0
    assert status["containerID"].startswith("containerd://") and status["imageID"]
    out = cluster.kubectl_ok("exec", "web", "-n", web, "-c", "peek", "--", "sh", "-c", "ps -o comm | grep -c httpd")
    assert out.strip() == "2"


@pytest.mark.parametrize("minor", VERSIONS)
def test_debug_without_a_terminal_creates_the_container(cluster: Cluster, web: str, minor: int) -> None:
    name = f"once-{minor}"
    out = run_kubectl(cluster, kubectl_binary(minor), "debug", "web", "-n", web, "--image=busybox",
                      "--image-pull-policy=IfNotPresent", "--target=app", f"--container={name}", "--", "true")
    assert out.returncode == 0, out.stderr
    status = ephemeral_state(cluster, web, "web", name, "terminated")
    assert status["state"]["terminated"]["exitCode"] == 0 and status["restartCount"] == 0


def test_rbac_refuses_exec_without_create_on_pods_exec(cluster: Cluster, web: str) -> None:
    cluster.kubectl_ok("create", "serviceaccount", "viewer", "-n", web)
    cluster.kubectl_ok("create", "rolebinding", "viewer", "-n", web, "--clusterrole=view",
                       f"--serviceaccount={web}:viewer")
    token = cluster.kubectl_ok("create", "token", "viewer", "-n", web).strip()
    for minor in VERSIONS:
        out = run_kubectl(cluster, kubectl_binary(minor), "--token", token, "exec", "web", "-n", web, "--", "true")
        assert out.returncode != 0
        assert (f'User "system:serviceaccount:{web}:viewer" cannot create resource "pods/exec" in API group "" '
                f'in the namespace "{web}"') in out.stderr, out


def test_the_official_python_client_streams_exec_and_port_forward(cluster: Cluster, web: str) -> None:
    from kubernetes import client, config
    from kubernetes.stream import portforward, stream

    api = client.CoreV1Api(config.new_client_from_config(str(cluster.kubeconfig)))
    out = stream(api.connect_get_namespaced_pod_exec, "web", web, command=["sh", "-c", "echo out; echo err >&2"],
                 stderr=True, stdin=False, stdout=True, tty=False)
    assert sorted(out.split()) == ["err", "out"]
    resp = stream(api.connect_get_namespaced_pod_exec, "web", web, command=["sh", "-c", "read x; exit $x"],
                  stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    resp.write_stdin("4\n")
    resp.run_forever(timeout=30)
    assert resp.returncode == 4
    forward = portforward(api.connect_get_namespaced_pod_portforward, "web", web, ports="8080")
    sock = forward.socket(8080)
    sock.setblocking(True)
    sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    sock.close()
    forward.close()
    assert data.startswith(b"HTTP/1.") and data.endswith(b"page-a\n"), data


def test_pod_service_and_node_proxies(cluster: Cluster, web: str) -> None:
    assert cluster.kubectl_ok("get", "--raw", f"/api/v1/namespaces/{web}/pods/web:8081/proxy/") == "page-b\n"
    assert cluster.kubectl_ok("get", "--raw", f"/api/v1/namespaces/{web}/pods/web/proxy/index.html") == "page-a\n"
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": web},
                    "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
    eventually_sync(lambda: cluster.kubectl("get", "--raw",
                                            f"/api/v1/namespaces/{web}/services/web:http/proxy/").stdout == "page-a\n",
                    timeout=30, interval=0.5, message="services/proxy reaches an endpoint")
    node = json.loads(cluster.kubectl_ok("get", "nodes", "-o", "json"))["items"][0]["metadata"]["name"]
    assert cluster.kubectl_ok("get", "--raw", f"/api/v1/nodes/{node}/proxy/healthz") == "ok"

