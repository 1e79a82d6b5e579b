"""pkctl end to end against `picokube up`: what a user types, what they see, and exit codes.

Two simulated nodes; every command runs as the `pkctl` console script does (a subprocess).
"""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube.testing.cluster import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - {{name: app, image: {image}, command: ["sh", "-c", "echo hello from {name}; sleep 3600"]}}
"""


def ok(cluster: Cluster, *args: str, stdin: str | None = None) -> str:
    out = cluster.pkctl(*args, stdin=stdin)
    assert out.returncode == 0, f"pkctl {' '.join(args)}: {out.stderr}{out.stdout}"
    return out.stdout


def fails(cluster: Cluster, *args: str, stdin: str | None = None) -> str:
    out = cluster.pkctl(*args, stdin=stdin)
    assert out.returncode != 0, f"pkctl {' '.join(args)} should fail: {out.stdout}"
    return out.stderr


def pods(cluster: Cluster, ns: str, selector: str) -> list[dict[str, Any]]:
    return list(json.loads(ok(cluster, "get", "pods", "-n", ns, "-l", selector, "-o", "json"))["items"])


def test_apply_folders_and_stdin_then_get_in_every_format(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    (tmp_path / "web.yaml").write_text(DEPLOYMENT.format(name="web", replicas=2, image="busybox"))
    (tmp_path / "nested" / "both.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata: {a: '1'}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\ndata: {b: '2'}\n")
    assert ok(cluster, "apply", "-n", ns, "-f", str(tmp_path)).splitlines() == ["deployment.apps/web created"]
    out = ok(cluster, "apply", "-n", ns, "-R", "-f", str(tmp_path)).splitlines()
    assert sorted(out) == ["configmap/one created", "configmap/two created", "deployment.apps/web unchanged"]
    piped = ok(cluster, "apply", "-n", ns, "-f", "-",
               stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: three}\n")
    assert piped == "configmap/three created\n"
    ok(cluster, "wait", "-n", ns, "deployment/web", "--for=condition=Available", "--timeout=60s")

    table = ok(cluster, "get", "deploy", "-n", ns).splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["web", "2/2", "2", "2"]
    wide = ok(cluster, "get", "pods", "-n", ns, "-o", "wide").splitlines()
    assert "NODE" in wide[0].split() and len(wide) == 3
    assert {"configmap/one", "configmap/two", "configmap/three"} <= set(
        ok(cluster, "get", "cm", "-n", ns, "-o", "name").split())
    names = ok(cluster, "get", "pods", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}").split()
    assert len(names) == 2 and all(n.startswith("web-") for n in names)
    ranged = ok(cluster, "get", "pods", "-n", ns, "-o",
                'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}').splitlines()
    assert sorted(line.split("\t")[1] for line in ranged) == ["Running", "Running"]
    doc = yaml.safe_load(ok(cluster, "get", "deployment/web", "-n", ns, "-o", "yaml"))
    assert doc["kind"] == "Deployment" and doc["spec"]["replicas"] == 2
    node = pods(cluster, ns, "app=web")[0]["spec"]["nodeName"]
    on_node = ok(cluster, "get", "pods", "-n", ns, "--field-selector", f"spec.nodeName={node}", "-o", "name")
    assert on_node and all(line.startswith("pod/web-") for line in on_node.split())
    everywhere = ok(cluster, "get", "pods", "-A").splitlines()
    assert everywhere[0].split()[0] == "NAMESPACE" and any(line.startswith(ns) for line in everywhere)
    missing = cluster.pkctl("get", "pod", "nope", "-n", ns)
    assert missing.returncode == 1 and missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_describe_tells_the_story_with_events(cluster: Cluster, ns: str) -> None:
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(name="story", replicas=1, image="busybox"))
    ok(cluster, "rollout", "status", "deployment/story", "-n", ns, "--timeout=60s")
    pod = pods(cluster, ns, "app=story")[0]
    text = ok(cluster, "describe", "pod", pod["metadata"]["name"], "-n", ns)
    for expected in ("Name:", "Node:", "Status:", "Running", "Containers:", "Image:", "busybox",
                     "Conditions:", "Ready", "Events:", "Scheduled", "default-scheduler", "Started"):
        assert expected in text, f"{expected!r} missing from:\n{text}"
    assert re.search(r"^Controlled By:\s+ReplicaSet/story-", text, re.M), text
    deploy = ok(cluster, "describe", "deployment/story", "-n", ns)
    assert "1 desired | 1 updated | 1 total | 1 available | 0 unavailable" in deploy
    assert re.search(r"^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$", deploy, re.M), deploy
    assert "NewReplicaSet:" in deploy and "ScalingReplicaSet" in deploy
    rs = ok(cluster, "describe", "rs", "-n", ns, "-l", "app=story")
    assert "1 Running / 0 Waiting / 0 Succeeded / 0 Failed" in rs and "SuccessfulCreate" in rs
    node = ok(cluster, "describe", "node", pod["spec"]["nodeName"])
    assert "Capacity:" in node and "Allocatable:" in node and pod["metadata"]["name"] in node
    assert "Ready" in node and "Allocated resources:" in node
    namespace = ok(cluster, "describe", "namespace", ns)
    assert namespace.splitlines()[0].split() == ["Name:", ns]
    assert "Active" in namespace and "No resource quota." in namespace


def test_scale_rollout_history_undo_restart_and_logs(cluster: Cluster, ns: str) -> None:
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(name="roll", replicas=1, image="busybox"))
    status = ok(cluster, "rollout", "status", "deploy/roll", "-n", ns, "--timeout=60s")
    assert status.splitlines()[-1] == 'deployment "roll" successfully rolled out'
    assert ok(cluster, "scale", "deploy/roll", "--replicas", "3", "-n", ns) == "deployment.apps/roll scaled\n"
    ok(cluster, "rollout", "status", "deploy/roll", "-n", ns, "--timeout=60s")
    assert len(pods(cluster, ns, "app=roll")) == 3
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(name="roll", replicas=3, image="busybox:2"))
    ok(cluster, "rollout", "status", "deploy/roll", "-n", ns, "--timeout=90s")
    history = ok(cluster, "rollout", "history", "deploy/roll", "-n", ns).split("\n")
    assert history[0].strip() == "deployment.apps/roll" and history[1].split() == ["REVISION", "CHANGE-CAUSE"]
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["1", "2"]
    assert "busybox:2" in ok(cluster, "rollout", "history", "deploy/roll", "-n", ns, "--revision", "2")
    assert ok(cluster, "rollout", "undo", "deploy/roll", "-n", ns) == "deployment.apps/roll rolled back\n"
    ok(cluster, "rollout", "status", "deploy/roll", "-n", ns, "--timeout=90s")
    images = {p["spec"]["containers"][0]["image"] for p in pods(cluster, ns, "app=roll")
              if not p["metadata"].get("deletionTimestamp")}
    assert images == {"busybox"}
    before = {p["metadata"]["name"] for p in pods(cluster, ns, "app=roll")}
    assert ok(cluster, "rollout", "restart", "deploy/roll", "-n", ns) == "deployment.apps/roll restarted\n"
    ok(cluster, "rollout", "status", "deploy/roll", "-n", ns, "--timeout=90s")
    after = {p["metadata"]["name"] for p in pods(cluster, ns, "app=roll") if not p["metadata"].get("deletionTimestamp")}
    assert after and not (after & before)
    name = sorted(after)[0]
    assert "hello from roll" in ok(cluster, "logs", name, "-n", ns)
    assert len(ok(cluster, "logs", name, "-n", ns, "--tail", "1").splitlines()) == 1
    assert "hello from roll" in ok(cluster, "logs", "deploy/roll", "-n", ns)
    wrong = fails(cluster, "logs", name, "-n", ns, "-c", "nope")
    assert wrong.startswith("Error from server (BadRequest): container nope is not valid for pod")


def test_get_watch_prints_changes_as_they_happen(cluster: Cluster, ns: str) -> None:
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: before}\n")
    watcher = subprocess.Popen([sys.executable, "-m", "kubectl", "--kubeconfig", str(cluster.kubeconfig), "get",
                                "configmaps", "-n", ns, "-w", "-o", "name"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cluster.env())
    assert watcher.stdout is not None
    stdout = watcher.stdout
    seen: list[str] = []

    def read_until(name: str) -> None:
        deadline = time.monotonic() + 30
        while f"configmap/{name}" not in seen:
            ready, _, _ = select.select([stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no configmap/{name} from pkctl get -w within 30s; saw {seen}"
            line = stdout.readline()
            assert line, f"pkctl get -w ended: {watcher.stderr.read() if watcher.stderr else ''}"
            seen.append(line.strip())
    try:
        read_until("before")  # the listing comes first
        ok(cluster, "apply", "-n", ns, "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\n")
        read_until("after")  # then each change, as it happens
        assert seen.index("configmap/before") < seen.index("configmap/after")
    finally:
        watcher.kill()
        watcher.wait()


def test_delete_by_label_by_file_and_cascade_orphan(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    f = tmp_path / "cms.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {x: y}}\n---\n"
                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {x: y}}\n")
    ok(cluster, "apply", "-n", ns, "-f", str(f))
    assert sorted(ok(cluster, "delete", "cm", "-l", "x=y", "-n", ns).splitlines()) == [
        'configmap "a" deleted', 'configmap "b" deleted']
    ok(cluster, "apply", "-n", ns, "-f", str(f))
    assert ok(cluster, "delete", "-f", str(f), "-n", ns).count("deleted") == 2
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(name="orphans", replicas=2, image="busybox"))
    ok(cluster, "rollout", "status", "deploy/orphans", "-n", ns, "--timeout=60s")
    ok(cluster, "delete", "deployment", "orphans", "-n", ns, "--cascade=orphan")
    rs = json.loads(ok(cluster, "get", "rs", "-n", ns, "-l", "app=orphans", "-o", "json"))["items"]
    assert len(rs) == 1 and not rs[0]["metadata"].get("ownerReferences")
    assert len(pods(cluster, ns, "app=orphans")) == 2
    gone = cluster.pkctl("delete", "cm", "ghost", "-n", ns)
    assert gone.returncode == 1 and 'configmaps "ghost" not found' in gone.stderr


def test_cordon_drain_respects_unmanaged_pods_and_evicts_the_rest(cluster: Cluster, ns: str) -> None:
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(name="movable", replicas=2, image="busybox"))
    ok(cluster, "rollout", "status", "deploy/movable", "-n", ns, "--timeout=60s")
    ok(cluster, "apply", "-n", ns, "-f", "-", stdin="apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\n"
       "spec: {nodeName: node-1, containers: [{name: app, image: busybox}]}\n")
    try:
        assert ok(cluster, "cordon", "node-1") == "node/node-1 cordoned\n"
        assert ok(cluster, "cordon", "node-1") == "node/node-1 already cordoned\n"
        refused = fails(cluster, "drain", "node-1")
        assert 'unable to drain node "node-1"' in refused and f"(use --force to override): {ns}/bare" in refused
        assert ok(cluster, "get", "pod", "bare", "-n", ns, "-o", "name") == "pod/bare\n"  # nothing was evicted
        drained = cluster.pkctl("drain", "node-1", "--force", "--timeout=90s", timeout=120)
        assert drained.returncode == 0, drained.stderr
        assert f"evicting pod {ns}/bare" in drained.stdout and drained.stdout.rstrip().endswith("node/node-1 drained")
        assert f"Warning: deleting Pods that declare no controller: {ns}/bare" in drained.stderr
        assert cluster.pkctl("get", "pod", "bare", "-n", ns).returncode == 1
        ok(cluster, "rollout", "status", "deploy/movable", "-n", ns, "--timeout=90s")
        nodes = {p["spec"]["nodeName"] for p in pods(cluster, ns, "app=movable")
                 if not p["metadata"].get("deletionTimestamp")}
        assert nodes == {"node-2"}
    finally:
        assert ok(cluster, "uncordon", "node-1") == "node/node-1 uncordoned\n"
    unschedulable = json.loads(ok(cluster, "get", "node", "node-1", "-o", "json"))["spec"].get("unschedulable")
    assert not unschedulable


def test_errors_name_the_file_and_line_and_leave_nothing_behind(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n"
                   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\n   broken: [\n")
    err = fails(cluster, "apply", "-n", ns, "-f", str(bad))
    assert str(bad) in err and "line" in err
    assert cluster.pkctl("get", "cm", "first", "-n", ns).returncode == 1  # nothing from that file was applied
    unknown = fails(cluster, "apply", "-n", ns, "-f", "-", stdin="apiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n")
    assert 'no matches for kind "Gizmo" in version "v1"' in unknown
    invalid = fails(cluster, "apply", "-n", ns, "-f", "-",
                    stdin="apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: []}\n")
    assert invalid.startswith("Error from server (Invalid)")
    assert fails(cluster, "get", "gizmos") == 'error: the server doesn\'t have a resource type "gizmos"\n'
    assert "No such option: --bogus-flag" in fails(cluster, "get", "pods", "--bogus-flag")
    unreachable = subprocess.run([sys.executable, "-m", "kubectl", "--server", "https://127.0.0.1:1", "--token", "x",
                                  "--insecure-skip-tls-verify", "get", "pods"], capture_output=True, text=True,
                                 timeout=30, env={**cluster.env(), "KUBECONFIG": str(tmp_path / "none")})
    assert unreachable.returncode == 1 and "127.0.0.1:1" in unreachable.stderr


def test_api_resources_version_config_and_completion(cluster: Cluster, tmp_path: Path) -> None:
    resources = ok(cluster, "api-resources").splitlines()
    assert resources[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {line.split()[0]: line.split() for line in resources[1:]}
    assert rows["deployments"] == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    assert rows["nodes"][-2:] == ["false", "Node"]
    assert "Server Version:" in ok(cluster, "version")
    copy = tmp_path / "kubeconfig"
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    doc["contexts"].append({"name": "other", "context": dict(doc["contexts"][0]["context"], namespace="kube-system")})
    copy.write_text(yaml.safe_dump(doc))
    contexts = ok(cluster, "--kubeconfig", str(copy), "config", "get-contexts").splitlines()
    assert contexts[0].split() == ["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]
    assert contexts[1].split()[:2] == ["*", "picokube"]
    assert ok(cluster, "--kubeconfig", str(copy), "config", "use-context", "other") == 'Switched to context "other".\n'
    assert ok(cluster, "--kubeconfig", str(copy), "config", "current-context") == "other\n"
    minified = yaml.safe_load(ok(cluster, "--kubeconfig", str(copy), "config", "view", "--minify"))
    assert [c["name"] for c in minified["contexts"]] == ["other"]
    assert minified["contexts"][0]["context"]["namespace"] == "kube-system"
    view = yaml.safe_load(ok(cluster, "--kubeconfig", str(copy), "config", "view"))
    assert view["users"][0]["user"]["token"] == "REDACTED"
    assert view["clusters"][0]["cluster"]["certificate-authority-data"] == "DATA+OMITTED"
    assert fails(cluster, "--kubeconfig", str(copy), "config", "use-context", "nope") == \
        'error: no context exists with the name: "nope"\n'
    assert "_PKCTL_COMPLETE" in ok(cluster, "completion", "bash")
    completed = subprocess.run([sys.executable, "-m", "kubectl"], capture_output=True, text=True, timeout=30,
                               env={**cluster.env(), "_PKCTL_COMPLETE": "complete_bash",
                                    "COMP_WORDS": "pkctl rollout st", "COMP_CWORD": "2"})
    assert completed.stdout.split() == ["status"]
