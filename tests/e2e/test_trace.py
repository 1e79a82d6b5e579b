"""`pkctl trace` against a whole cluster: the chain a Deployment causes, linked into one trace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = pytest.mark.e2e

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: {image}
        resources:
          requests: {{cpu: {cpu}}}
"""


def trace_of(cluster: Cluster, ns: str, target: str) -> dict[str, Any]:
    out = cluster.pkctl("trace", target, "-n", ns, "-o", "json")
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def running_pods(cluster: Cluster, ns: str) -> list[str]:
    pods = json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-o", "json"))["items"]
    return [p["metadata"]["name"] for p in pods
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def hops_by(view: dict[str, Any], actor: str) -> list[dict[str, Any]]:
    return [h for h in view["hops"] if h["actor"] == actor or h["actor"].startswith(actor + "/")]


def test_a_deployment_is_one_trace_in_causal_order(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(image="busybox", cpu="100m"))
    eventually_sync(lambda: len(running_pods(cluster, ns)) == 2, timeout=60)
    pods = running_pods(cluster, ns)

    def complete() -> dict[str, Any] | None:
        view = trace_of(cluster, ns, "deploy/web")
        written = {d["object"] for h in view["hops"] for d in h["did"]}
        kubelets = {h["reactedTo"].get("object") for h in hops_by(view, "kubelet") if h["reactedTo"]}
        ok = all(f"pod/{ns}/{p}" in written and f"pod/{ns}/{p}" in kubelets for p in pods)
        return view if ok else None

    view = eventually_sync(complete, timeout=30)
    assert view is not None
    hops = view["hops"]
    first = hops[0]
    assert view["traceID"] and view["object"] == f"deployment/{ns}/web"
    assert first["actor"] == "kube-apiserver" and first["object"] == f"deployment/{ns}/web"
    assert first["reactedTo"]["request"].startswith("create") or first["reactedTo"]["request"].startswith("patch")
    for h in hops:  # the fields `pkctl trace -o json` promises
        assert {"actor", "action", "object", "reactedTo", "start", "durationMs", "message", "hops"} <= set(h), h
        assert h["action"] and h["start"].endswith("Z")
    position = {h["spanId"]: i for i, h in enumerate(hops)}
    for i, h in enumerate(hops):  # causal order: every hop after the hop that caused it
        if h["cause"] is not None:
            assert position[h["cause"]] < i, h
    by_object_rv = {(h["object"], h["resourceVersion"]) for h in hops if h["actor"] == "kube-apiserver"}
    for actor, kind in (("deployment-controller", "deployment"), ("replicaset-controller", "replicaset"),
                        ("default-scheduler", "pod"), ("kubelet", "pod")):
        # Hops whose writes succeeded (a write refused with a Conflict wrote no resourceVersion).
        acting = [h for h in hops_by(view, actor)
                  if h["reactedTo"] and str(h["reactedTo"].get("object", "")).startswith(kind + "/")
                  and any(d["resourceVersion"] for d in h["did"])]
        assert acting, f"no {actor} hop that wrote something"
        for h in acting:
            assert h["reactedTo"]["resourceVersion"], h
        # A write outside the trace (a kubelet's untraced status refresh) keeps the object's
        # trace context, so a hop may react to a resourceVersion this trace did not write;
        # the hops the apply caused react to ones it did.
        assert any((h["reactedTo"]["object"], h["reactedTo"]["resourceVersion"]) in by_object_rv for h in acting)
    for pod in pods:
        ref = f"pod/{ns}/{pod}"
        scheduled = [h for h in hops_by(view, "default-scheduler")
                     if h["reactedTo"] and h["reactedTo"].get("object") == ref]
        assert any(h["action"].startswith(f"bind {pod} to ") and h["node"] for h in scheduled), scheduled
        synced = [h for h in hops_by(view, "kubelet") if h["reactedTo"] and h["reactedTo"].get("object") == ref
                  and h["did"]]
        assert synced
        phases = {p["action"] for h in synced for p in h["hops"]}
        assert {"RunPodSandbox", "CreateContainer", "StartContainer"} <= phases, phases
    assert view["summary"]["toRunning"] is not None
    text = cluster.pkctl("trace", "deploy/web", "-n", ns)
    assert text.returncode == 0 and "default-scheduler" in text.stdout and "StartContainer" in text.stdout

    # A rollout by the user starts its own trace.
    cluster.kubectl_ok("set", "image", "-n", ns, "deploy/web", "web=busybox:1.36")
    def new_trace() -> dict[str, Any] | None:
        later = trace_of(cluster, ns, "deploy/web")
        return later if later["traceID"] != view["traceID"] and hops_by(later, "replicaset-controller") else None
    later = eventually_sync(new_trace, timeout=30)
    assert later is not None and later["hops"][0]["actor"] == "kube-apiserver"
    # --all lists the earlier trace too, oldest first.
    out = cluster.pkctl("trace", "deploy/web", "-n", ns, "-o", "json", "--all")
    assert out.returncode == 0, out.stderr
    every = [v["traceID"] for v in json.loads(out.stdout)]
    assert view["traceID"] in every and later["traceID"] in every
    assert every.index(view["traceID"]) < every.index(later["traceID"])


def test_an_unschedulable_pod_ends_in_the_schedulers_reason(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT.format(image="busybox", cpu="500"))

    def stuck() -> dict[str, Any] | None:
        view = trace_of(cluster, ns, "deploy/web")
        return view if view["summary"].get("waitingOn") else None

    view = eventually_sync(stuck, timeout=30)
    assert view is not None
    waiting = view["summary"]["waitingOn"][0]
    assert waiting["actor"] == "default-scheduler"
    assert "nodes are available" in waiting["reason"] and "Insufficient cpu" in waiting["reason"]
    text = cluster.pkctl("trace", "deploy/web", "-n", ns).stdout
    assert "waiting on default-scheduler" in text and "Insufficient cpu" in text


def test_a_pod_whose_image_cannot_be_pulled_ends_in_the_kubelets_reason(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-",
                       stdin=DEPLOYMENT.format(image="registry.invalid/app:1", cpu="100m"))

    def stuck() -> dict[str, Any] | None:
        view = trace_of(cluster, ns, "deploy/web")
        kubelet = [w for w in view["summary"].get("waitingOn") or [] if w["actor"].startswith("kubelet/")]
        return kubelet[0] if kubelet and "ErrImagePull" in kubelet[0]["reason"] else None

    waiting = eventually_sync(stuck, timeout=30)
    assert waiting is not None and waiting["object"].startswith(f"pod/{ns}/web-")
    view = trace_of(cluster, ns, "deploy/web")
    reasons = [h["message"] for h in hops_by(view, "kubelet") if h["message"]]
    assert any(r == "pulling image registry.invalid/app:1" for r in reasons), reasons
    text = cluster.pkctl("trace", "deploy/web", "-n", ns).stdout
    assert "waiting on kubelet/" in text and "ErrImagePull" in text
