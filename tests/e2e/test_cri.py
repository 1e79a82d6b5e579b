"""Real containers: `picokube up --runtime cri` runs each node's own containerd, and pods run in runc.

Two nodes, each with a private containerd, CNI bridge and pod subnet; images come from the
locally built busybox image (no registry). Needs root, containerd, runc, the CNI plugins
and busybox-static; in CI a skip here is a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kubelet.dns import parse_resolv_conf
from picokube.containerd import containerd_available
from picokube.images import build_busybox_image

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no CRI runtime: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "2", "--runtime", "cri", "--max-container-restart-period", "4")



def pod(name: str, ns: str, command: str, *, node: str = "node-1", restart: str = "Always",
        extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{app: {name}}}}}
spec:
  nodeName: {node}
  restartPolicy: {restart}
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", {json.dumps(command)}]
{extra}"""


def get(cluster: Cluster, ns: str, name: str) -> dict[str, Any]:
    return dict(json.loads(cluster.kubectl_ok("get", "pod", name, "-n", ns, "-o", "json")))


def wait_for(cluster: Cluster, ns: str, name: str, check: Any, what: str, timeout: float = 60) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        p = get(cluster, ns, name)
        return p if check(p) else None
    result = eventually_sync(probe, timeout=timeout, interval=0.3, message=f"{name}: {what}")
    assert result is not None
    return result


def running(p: dict[str, Any]) -> bool:
    return p["status"].get("phase") == "Running" and all(
        c.get("ready") for c in p["status"].get("containerStatuses", [{}]))


def node_containers(cluster: Cluster, node: str) -> list[str]:
    sock = cluster.data_dir / "containerd" / node / "containerd.sock"
    out = subprocess.run(["ctr", "--address", str(sock), "-n", "k8s.io", "containers", "ls", "-q"],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.split()


def test_a_pod_runs_answers_on_its_ip_and_logs(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("web", ns, "echo serving; exec httpd -f -p 8080 -h /www"))
    p = wait_for(cluster, ns, "web", running, "Running and Ready")
    ip = p["status"]["podIP"]
    assert ip.startswith("10.88.1.")  # node-1's own pod subnet
    status = p["status"]["containerStatuses"][0]
    assert status["containerID"].startswith("containerd://") and status["imageID"]
    with urllib.request.urlopen(f"http://{ip}:8080/", timeout=5) as r:
        assert r.read() == b"hello from picokube\n"
    assert cluster.kubectl_ok("logs", "web", "-n", ns).splitlines()[0] == "serving"


def test_a_pod_with_a_long_name_gets_a_63_character_hostname(cluster: Cluster, ns: str) -> None:
    name = "h" * 62 + "-" + "x" * 10  # 73 characters: cut to 63, then the trailing '-' trimmed
    manifest = pod(name, ns, "hostname; sleep 3600").replace(f"labels: {{app: {name}}}", "labels: {app: long}")
    cluster.kubectl_ok("apply", "-f", "-", stdin=manifest)
    wait_for(cluster, ns, name, running, "Running with a truncated hostname")
    assert cluster.kubectl_ok("logs", name, "-n", ns).split() == ["h" * 62]


def test_a_pods_resolv_conf_names_the_cluster_dns_or_its_own_dns_config(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("resolv", ns, "cat /etc/resolv.conf; sleep 3600"))
    own = pod("own-dns", ns, "cat /etc/resolv.conf; sleep 3600", node="node-2", extra="""\
  dnsPolicy: None
  dnsConfig:
    nameservers: [1.1.1.1]
    searches: [example.com]
    options: [{name: ndots, value: "2"}, {name: edns0}]
""")
    cluster.kubectl_ok("apply", "-f", "-", stdin=own)
    wait_for(cluster, ns, "resolv", running, "Running")
    wait_for(cluster, ns, "own-dns", running, "Running")
    host_searches = parse_resolv_conf(Path("/etc/resolv.conf").read_text()).searches
    searches = " ".join(dict.fromkeys((f"{ns}.svc.cluster.local", "svc.cluster.local", "cluster.local",
                                       *host_searches)))
    assert cluster.kubectl_ok("logs", "resolv", "-n", ns).splitlines() == [
        f"search {searches}", "nameserver 10.96.0.10", "options ndots:5"]
    assert cluster.kubectl_ok("logs", "own-dns", "-n", ns).splitlines() == [
        "search example.com", "nameserver 1.1.1.1", "options ndots:2 edns0"]


def test_cri_nodes_report_the_machines_capacity(cluster: Cluster) -> None:
    node = json.loads(cluster.kubectl_ok("get", "node", "node-1", "-o", "json"))
    capacity, allocatable = node["status"]["capacity"], node["status"]["allocatable"]
    assert capacity["cpu"] == str(len(os.sched_getaffinity(0)))
    mem_kib = int(next(ln.split()[1] for ln in Path("/proc/meminfo").read_text().splitlines()
                       if ln.startswith("MemTotal:")))
    assert capacity["memory"] == f"{mem_kib}Ki"
    assert allocatable["memory"] == f"{mem_kib - 100 * 1024}Ki"  # the memory.available<100Mi eviction reserve
    assert int(allocatable["ephemeral-storage"][:-2]) < int(capacity["ephemeral-storage"][:-2])
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")


def test_logs_tail_timestamps_since_follow_and_previous(cluster: Cluster, ns: str) -> None:
    script = "for i in 1 2 3 4 5; do echo line-$i; done; sleep 2; echo late; sleep 1; exit 1"
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("talker", ns, script))
    # -f follows the first instance live until it exits: every line, in order, then the stream ends.
    def follow() -> subprocess.CompletedProcess[str] | None:
        r = cluster.kubectl("logs", "-f", "talker", "-n", ns, timeout=60)
        return r if r.returncode == 0 else None
    followed = eventually_sync(follow, timeout=60, interval=0.3, message="kubectl logs -f can start")
    assert followed.stdout.split() == [*(f"line-{i}" for i in range(1, 6)), "late"]
    wait_for(cluster, ns, "talker", lambda p: (p["status"].get("containerStatuses") or [{}])[0]
             .get("restartCount", 0) >= 1, "restarted", timeout=60)
    previous = cluster.kubectl_ok("logs", "talker", "-n", ns, "--previous").split()
    assert previous[:5] == [f"line-{i}" for i in range(1, 6)] and previous[-1] == "late"
    tail = cluster.kubectl_ok("logs", "talker", "-n", ns, "--previous", "--tail", "2").split()
    assert tail == ["line-5", "late"]
    stamped = cluster.kubectl_ok("logs", "talker", "-n", ns, "--previous", "--timestamps").splitlines()
    when, _, text = stamped[0].partition(" ")
    assert text == "line-1" and when.endswith("Z") and "T" in when
    assert cluster.kubectl_ok("logs", "talker", "-n", ns, "--previous", "--since", "1h").split() == previous
    mini = cluster.pkctl("logs", "talker", "-n", ns, "--previous", "--tail", "2")  # pkctl sends the same query
    assert mini.returncode == 0 and mini.stdout.split() == ["line-5", "late"], mini.stderr
    missing = cluster.kubectl("logs", "talker", "-n", ns, "-c", "nope")
    assert missing.returncode != 0 and 'container nope is not valid for pod talker' in missing.stderr


def test_pods_on_different_nodes_reach_each_other(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("server", ns, "exec httpd -f -p 8080 -h /www", node="node-2"))
    server_ip = wait_for(cluster, ns, "server", running, "Running")["status"]["podIP"]
    assert server_ip.startswith("10.88.2.")
    request = f"printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 {server_ip} 8080"
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("client", ns, request, restart="Never"))
    wait_for(cluster, ns, "client", lambda p: p["status"].get("phase") == "Succeeded", "Succeeded")
    assert "hello from picokube" in cluster.kubectl_ok("logs", "client", "-n", ns)


def test_crash_loop_backoff_with_the_exit_code_in_last_state(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("crash", ns, "echo dying; exit 3"))

    def backing_off(p: dict[str, Any]) -> bool:
        cs = (p["status"].get("containerStatuses") or [{}])[0]
        waiting = cs.get("state", {}).get("waiting", {})
        return bool(waiting.get("reason") == "CrashLoopBackOff" and cs.get("restartCount", 0) >= 1)
    p = wait_for(cluster, ns, "crash", backing_off, "CrashLoopBackOff", timeout=90)
    last = p["status"]["containerStatuses"][0]["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (3, "Error")
    assert cluster.kubectl_ok("logs", "crash", "-n", ns, "--previous").strip() == "dying"


def test_restart_policy_never_ends_succeeded_or_failed(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("ok", ns, "exit 0", restart="Never"))
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("bad", ns, "exit 5", restart="Never"))
    wait_for(cluster, ns, "ok", lambda p: p["status"].get("phase") == "Succeeded", "Succeeded")
    bad = wait_for(cluster, ns, "bad", lambda p: p["status"].get("phase") == "Failed", "Failed")
    assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 5
    assert bad["status"]["containerStatuses"][0]["restartCount"] == 0


def test_memory_and_cpu_limits_reach_the_container(cluster: Cluster, ns: str) -> None:
    extra = "    resources: {limits: {memory: 64Mi, cpu: 500m}}\n"
    command = "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.cfs_quota_us"
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("limited", ns, command, restart="Never", extra=extra))
    wait_for(cluster, ns, "limited", lambda p: p["status"].get("phase") == "Succeeded", "Succeeded")
    assert cluster.kubectl_ok("logs", "limited", "-n", ns).split() == [str(64 * 1024 * 1024), "50000"]


def test_delete_stops_and_removes_the_containers(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("doomed", ns, "trap 'echo bye; exit 0' TERM; "
                                                          "while true; do sleep 0.2; done"))
    p = wait_for(cluster, ns, "doomed", running, "Running")
    cid = p["status"]["containerStatuses"][0]["containerID"].removeprefix("containerd://")
    assert cid in node_containers(cluster, "node-1")
    cluster.kubectl_ok("delete", "pod", "doomed", "-n", ns, "--timeout=30s")  # waits until it is gone
    eventually_sync(lambda: cid not in node_containers(cluster, "node-1"), timeout=30,
                    message="container removed from containerd")


def test_a_killed_kubelet_keeps_its_pods_as_they_were(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("steady", ns, "exec httpd -f -p 8080 -h /www"))
    before = wait_for(cluster, ns, "steady", running, "Running")
    old_pid = cluster.pid_of("kubelet-node-1")
    os.kill(old_pid, signal.SIGKILL)  # the supervisor starts a new one

    def restarted() -> bool:
        try:
            pid = cluster.pid_of("kubelet-node-1")
            os.kill(pid, 0)
        except (StopIteration, ProcessLookupError):
            return False
        return pid != old_pid
    eventually_sync(restarted, timeout=60, message="kubelet restarted")
    cluster.kubectl_ok("label", "pod", "steady", "-n", ns, "touched=yes")  # an event the new kubelet must sync
    after = wait_for(cluster, ns, "steady", lambda p: running(p) and p["metadata"]["labels"].get("touched") == "yes",
                     "still Running")
    b, a = before["status"]["containerStatuses"][0], after["status"]["containerStatuses"][0]
    assert (a["containerID"], a["restartCount"], after["status"]["podIP"]) == \
        (b["containerID"], 0, before["status"]["podIP"])
    assert len([c for c in node_containers(cluster, "node-1")]) >= 1


PROBED = """\
    readinessProbe:
      httpGet: {path: /, port: web}
      periodSeconds: 1
    ports: [{name: web, containerPort: 8080}]
"""


def test_readiness_probe_gates_ready_and_liveness_restarts(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("probed", ns, "sleep 2; exec httpd -f -p 8080 -h /www",
                                                   extra=PROBED))
    early = wait_for(cluster, ns, "probed", lambda p: p["status"].get("phase") == "Running", "Running")
    if not early["status"]["containerStatuses"][0]["ready"]:  # httpd starts two seconds late
        conditions = {c["type"]: c["status"] for c in early["status"]["conditions"]}
        assert conditions["Ready"] == "False"
    wait_for(cluster, ns, "probed", running, "Ready through the httpGet probe")

    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("deaf", ns, "sleep 600", extra=PROBED))
    wait_for(cluster, ns, "deaf", lambda p: p["status"].get("phase") == "Running", "Running")
    eventually_sync(lambda: "Readiness probe failed" in cluster.kubectl_ok("describe", "pod", "deaf", "-n", ns),
                    timeout=30, message="Unhealthy event")
    assert not get(cluster, ns, "deaf")["status"]["containerStatuses"][0]["ready"]

    liveness = """\
    livenessProbe:
      exec: {command: [cat, /tmp/healthy]}
      periodSeconds: 1
      failureThreshold: 2
"""
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("flaky", ns, "touch /tmp/healthy; sleep 2; rm /tmp/healthy; "
                                                   "sleep 600", extra=liveness))
    restarted = wait_for(cluster, ns, "flaky",
                         lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("restartCount", 0) >= 1,
                         "restarted by the liveness probe", timeout=90)
    assert restarted["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] in (137, 143)
    assert "failed liveness probe, will be restarted" in cluster.kubectl_ok("describe", "pod", "flaky", "-n", ns)


def test_init_containers_run_first_and_env_comes_from_the_pod(cluster: Cluster, ns: str) -> None:
    manifest = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: story, namespace: {ns}}}
spec:
  nodeName: node-2
  restartPolicy: Never
  initContainers:
  - {{name: setup, image: busybox, imagePullPolicy: IfNotPresent, command: [sh, -c, "echo init done"]}}
  containers:
  - name: app
    image: busybox
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'echo "$GREETING $POD_NAME $POD_NAMESPACE $POD_IP"']
    env:
    - {{name: GREETING, value: hello}}
    - {{name: POD_NAME, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}
    - {{name: POD_NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}
    - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
"""
    cluster.kubectl_ok("apply", "-f", "-", stdin=manifest)
    p = wait_for(cluster, ns, "story", lambda p: p["status"].get("phase") == "Succeeded", "Succeeded")
    init = p["status"]["initContainerStatuses"][0]["state"]["terminated"]
    app = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert init["exitCode"] == 0 and init["finishedAt"] <= app["startedAt"]
    assert cluster.kubectl_ok("logs", "story", "-n", ns, "-c", "setup").strip() == "init done"
    words = cluster.kubectl_ok("logs", "story", "-n", ns).split()
    assert words[:3] == ["hello", "story", ns] and words[3].startswith("10.88.2.")


def test_an_imported_image_runs_with_pull_policy_never(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    image = f"registry.local/hello:{uuid.uuid4().hex[:6]}"
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("custom", ns, "echo from the custom image", restart="Never")
            .replace("image: busybox", f"image: {image}").replace("IfNotPresent", "Never"))

    def never_pulled(p: dict[str, Any]) -> bool:
        cs = (p["status"].get("containerStatuses") or [{}])[0]
        return bool(cs.get("state", {}).get("waiting", {}).get("reason") == "ErrImageNeverPull")
    wait_for(cluster, ns, "custom", never_pulled, "ErrImageNeverPull")

    tarball = build_busybox_image(tmp_path / "hello.tar", image, ["sh"])
    out = cluster.picokube("image", "import", str(tarball), "--node", "node-1")
    assert out.returncode == 0, out.stderr
    assert "imported hello.tar into node-1" in out.stdout
    wait_for(cluster, ns, "custom", lambda p: p["status"].get("phase") == "Succeeded", "ran once imported")
    assert cluster.kubectl_ok("logs", "custom", "-n", ns).strip() == "from the custom image"


def test_pods_survive_a_containerd_restart(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("survivor", ns, "exec httpd -f -p 8080 -h /www"))
    before = wait_for(cluster, ns, "survivor", running, "Running")
    old_pid = cluster.pid_of("containerd-node-1")
    os.kill(old_pid, signal.SIGKILL)  # the shim keeps the container; the supervisor restarts containerd

    def back() -> bool:
        try:
            pid = cluster.pid_of("containerd-node-1")
            os.kill(pid, 0)
        except (StopIteration, ProcessLookupError):
            return False
        return pid != old_pid and bool(node_containers(cluster, "node-1"))
    eventually_sync(back, timeout=60, message="containerd restarted")
    cluster.kubectl_ok("label", "pod", "survivor", "-n", ns, "after=restart")
    after = wait_for(cluster, ns, "survivor", lambda p: running(p) and p["metadata"]["labels"].get("after"),
                     "still Running")
    b, a = before["status"]["containerStatuses"][0], after["status"]["containerStatuses"][0]
    assert (a["containerID"], a["restartCount"]) == (b["containerID"], 0)

    def serves() -> bool:
        try:
            with urllib.request.urlopen(f"http://{after['status']['podIP']}:8080/", timeout=5) as r:
                return bool(r.read() == b"hello from picokube\n")
        except OSError:
            return False
    eventually_sync(serves, timeout=20, message="the pod still answers on its IP")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_readme_examples_do_what_they_say(cluster: Cluster, ns: str) -> None:
    for example in ("web.yaml", "crashloop.yaml", "unschedulable.yaml", "job-like.yaml"):
        out = cluster.pkctl("apply", "-n", ns, "-f", str(EXAMPLES / example))
        assert out.returncode == 0, out.stderr
    status = cluster.pkctl("rollout", "status", "deploy/web", "-n", ns, "--timeout=90s", timeout=120)
    assert status.returncode == 0 and 'deployment "web" successfully rolled out' in status.stdout, status.stderr
    listed = json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "app=web", "-o", "json"))["items"]
    assert len(listed) == 2
    for p in listed:
        with urllib.request.urlopen(f"http://{p['status']['podIP']}:8080/", timeout=5) as r:
            assert r.read() == b"hello from picokube\n"
    events = cluster.kubectl_ok("describe", "pod", listed[0]["metadata"]["name"], "-n", ns)
    assert 'Container image "busybox" already present on machine' in events

    def crash_looping(p: dict[str, Any]) -> bool:
        cs = (p["status"].get("containerStatuses") or [{}])[0]
        return bool(cs.get("state", {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"
                    and cs.get("lastState", {}).get("terminated", {}).get("exitCode") == 3)
    wait_for(cluster, ns, "crashloop", crash_looping, "CrashLoopBackOff with exit code 3", timeout=90)
    done = cluster.pkctl("wait", "pod/countdown", "-n", ns, "--for=jsonpath={.status.phase}=Succeeded",
                         "--timeout=60s", timeout=90)
    assert done.returncode == 0 and done.stdout == "pod/countdown condition met\n", done.stderr
    assert cluster.pkctl("logs", "countdown", "-n", ns).stdout.split() == ["3", "2", "1", "liftoff"]
    pending = get(cluster, ns, "too-big")
    assert pending["status"].get("phase") == "Pending" and not pending["spec"].get("nodeName")
    described = eventually_sync(lambda: (lambda t: t if "FailedScheduling" in t else None)(
        cluster.kubectl_ok("describe", "pod", "too-big", "-n", ns)), timeout=30, message="FailedScheduling event")
    assert "Insufficient cpu" in described


def test_the_kubelet_hop_of_a_real_pod_holds_its_cri_phases(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=pod("traced", ns, "exec httpd -f -p 8080 -h /www", extra=PROBED))
    wait_for(cluster, ns, "traced", running, "Ready")

    def kubelet_hops() -> list[dict[str, Any]] | None:
        out = cluster.pkctl("trace", "pod/traced", "-n", ns, "-o", "json")
        if out.returncode != 0:
            return None
        hops = [h for h in json.loads(out.stdout)["hops"] if h["actor"] == "kubelet/node-1" and h["hops"]]
        phases = {p["action"] for h in hops for p in h["hops"]}
        return hops if {"RunPodSandbox", "CreateContainer", "StartContainer", "probes"} <= phases else None

    hops = eventually_sync(kubelet_hops, timeout=30, message="the kubelet's CRI phases in the trace")
    assert hops is not None
    first = hops[0]
    assert first["reactedTo"]["object"] == f"pod/{ns}/traced" and first["did"]
    phases = {p["action"]: p for p in first["hops"]}
    sandbox, start = phases["RunPodSandbox"], phases["StartContainer"]
    assert sandbox["durationMs"] > 0 and start["durationMs"] > 0  # real runc work takes time
    assert sandbox["offset"] <= phases["CreateContainer"]["offset"] <= start["offset"]
