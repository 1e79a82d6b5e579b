"""A kopf operator, unchanged, against a cluster of real processes.

The operator (`kopf run` on a module written here) reconciles a custom kind: a create
handler making a child ConfigMap it adopts (so the garbage collector removes it with its
parent), a field handler, a timer, and a delete handler run under kopf's finalizer. A
restarted operator resumes from kopf's own annotations instead of creating again. With
kopf's peering CRDs applied, a second operator of higher priority pauses the first one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.process import Process

pytestmark = pytest.mark.e2e

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.kopf.example.com
spec:
  group: kopf.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""

# kopf's peering resources, as its documentation gives them (kopf.dev/v1, a status of peers).
PEERING_CRDS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterkopfpeerings.kopf.dev
spec:
  scope: Cluster
  group: kopf.dev
  names: {kind: ClusterKopfPeering, plural: clusterkopfpeerings, singular: clusterkopfpeering}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kopfpeerings.kopf.dev
spec:
  scope: Namespaced
  group: kopf.dev
  names: {kind: KopfPeering, plural: kopfpeerings, singular: kopfpeering}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

OPERATOR = '''\
import kopf
import kubernetes

GROUP, VERSION, PLURAL = "kopf.example.com", "v1", "widgets"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.watching.server_timeout = 30
    kubernetes.config.load_kube_config()


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_fn(spec, name, namespace, body, **_):
    child = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": f"{name}-child"}, "data": {"size": str(spec.get("size"))}}
    kopf.adopt(child)
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, child)
    kopf.info(body, reason="ChildCreated", message=f"ConfigMap {name}-child")
    print(f"CREATED {namespace}/{name}", flush=True)
    return {"child": child["metadata"]["name"]}


@kopf.on.field(GROUP, VERSION, PLURAL, field="spec.size")
def size_fn(old, new, name, namespace, patch, **_):
    if old is None:
        return
    kubernetes.client.CoreV1Api().patch_namespaced_config_map(f"{name}-child", namespace,
                                                               {"data": {"size": str(new)}})
    patch.status["observedSize"] = new
    print(f"RESIZED {namespace}/{name} {old}->{new}", flush=True)


@kopf.timer(GROUP, VERSION, PLURAL, interval=1.0)
def tick_fn(status, patch, **_):
    patch.status["ticks"] = int(status.get("ticks") or 0) + 1


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_fn(name, namespace, **_):
    print(f"DELETED {namespace}/{name}", flush=True)
'''


def apply(cluster: Cluster, manifest: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=manifest)


def get(cluster: Cluster, *args: str) -> dict[str, Any] | None:
    out = cluster.kubectl("get", *args, "-o", "json")
    return dict(json.loads(out.stdout)) if out.returncode == 0 else None


def widget(name: str, ns: str, size: int) -> str:
    return json.dumps({"apiVersion": "kopf.example.com/v1", "kind": "Widget",
                       "metadata": {"name": name, "namespace": ns}, "spec": {"size": size}})


def operator(cluster: Cluster, tmp_path: Path, name: str, *args: str) -> Process:
    module = tmp_path / "operator.py"
    module.write_text(OPERATOR)
    return Process([sys.executable, "-m", "kopf", "run", str(module), "--verbose", *args],
                   log_path=tmp_path / f"{name}.log", env={**cluster.env(), "PYTHONUNBUFFERED": "1"})


@pytest.fixture(scope="module")
def widgets(cluster: Cluster) -> Iterator[Cluster]:
    apply(cluster, CRD)
    cluster.kubectl_ok("wait", "--for=condition=Established", "crd/widgets.kopf.example.com", "--timeout=30s")
    yield cluster


def test_operator_reconciles_adopts_finalizes_and_resumes(widgets: Cluster, ns: str, tmp_path: Path) -> None:
    cluster = widgets
    op = operator(cluster, tmp_path, "operator", "--namespace", ns, "--standalone")
    with op:
        apply(cluster, widget("w1", ns, 3))

        # The create handler ran once, made the child and adopted it; kopf recorded the outcome.
        child = eventually_sync(lambda: get(cluster, "configmap", "w1-child", "-n", ns), timeout=60,
                                message=f"child ConfigMap\n{op.log(3000)}")
        assert child["data"] == {"size": "3"}
        w1 = eventually_sync(lambda: _handled(get(cluster, "widget", "w1", "-n", ns)), timeout=30,
                             message="kopf's last-handled-configuration")
        ref = child["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["uid"]) == ("Widget", "w1", w1["metadata"]["uid"])
        assert ref.get("controller") is True and ref.get("blockOwnerDeletion") is True
        assert any(f.startswith("kopf.zalando.org/") for f in w1["metadata"]["finalizers"])
        assert w1["status"]["create_fn"] == {"child": "w1-child"}

        # The timer ticks (status merge patches); the field handler sees the change of spec.size.
        eventually_sync(lambda: _ticks(cluster, ns, "w1") >= 2, timeout=30, message="timer ticks")
        cluster.kubectl_ok("patch", "widget", "w1", "-n", ns, "--type=merge", "-p", '{"spec": {"size": 5}}')
        eventually_sync(lambda: (get(cluster, "widget", "w1", "-n", ns) or {}).get("status", {})
                        .get("observedSize") == 5, timeout=30, message=f"field handler\n{op.log(3000)}")
        assert (get(cluster, "configmap", "w1-child", "-n", ns) or {})["data"] == {"size": "5"}

        # kopf posts an Event of the custom object.
        eventually_sync(lambda: any(e["involvedObject"].get("kind") == "Widget" and e["reason"] == "ChildCreated"
                                    for e in (get(cluster, "events", "-n", ns) or {}).get("items", [])),
                        timeout=30, message="events for the Widget")

    # A restarted operator resumes: no second create for w1, the timer goes on.
    ticks = _ticks(cluster, ns, "w1")
    op.start()
    try:
        eventually_sync(lambda: _ticks(cluster, ns, "w1") > ticks + 1, timeout=60,
                        message=f"timer after restart\n{op.log(3000)}")
        assert op.log().count(f"CREATED {ns}/w1") == 1, op.log(3000)

        # Delete: the delete handler runs under kopf's finalizer, then the object and its child go.
        cluster.kubectl_ok("delete", "widget", "w1", "-n", ns, "--wait=false")
        eventually_sync(lambda: f"DELETED {ns}/w1" in op.log(), timeout=60, message=f"delete handler\n{op.log(3000)}")
        eventually_sync(lambda: get(cluster, "widget", "w1", "-n", ns) is None, timeout=60, message="widget gone")
        eventually_sync(lambda: get(cluster, "configmap", "w1-child", "-n", ns) is None, timeout=60,
                        message="child collected with its owner")
    finally:
        op.stop()


def _handled(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    return obj if "kopf.zalando.org/last-handled-configuration" in annotations else None


def _ticks(cluster: Cluster, ns: str, name: str) -> int:
    return int(((get(cluster, "widget", name, "-n", ns) or {}).get("status") or {}).get("ticks") or 0)


def test_peering_pauses_the_lower_priority_operator(widgets: Cluster, ns: str, tmp_path: Path) -> None:
    cluster = widgets
    apply(cluster, PEERING_CRDS)
    for crd in ("clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev"):
        cluster.kubectl_ok("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=30s")
    apply(cluster, json.dumps({"apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
                               "metadata": {"name": "widgets", "namespace": ns}}))

    low = operator(cluster, tmp_path, "low", "--namespace", ns, "--peering", "widgets", "--priority", "10")
    high = operator(cluster, tmp_path, "high", "--namespace", ns, "--peering", "widgets", "--priority", "100")
    with low:
        apply(cluster, widget("w2", ns, 1))
        eventually_sync(lambda: f"CREATED {ns}/w2" in low.log(), timeout=60, message=f"low creates\n{low.log(3000)}")
        with high:
            eventually_sync(lambda: "Pausing operations in favour of" in low.log(), timeout=60,
                            message=f"low pauses\n{low.log(3000)}")
            peers = (get(cluster, "kopfpeering", "widgets", "-n", ns) or {}).get("status") or {}
            assert {p["priority"] for p in peers.values()} == {10, 100}
            # Only the high one works now: it handles a new object.
            apply(cluster, widget("w3", ns, 1))
            eventually_sync(lambda: f"CREATED {ns}/w3" in high.log(), timeout=60,
                            message=f"high creates\n{high.log(3000)}")
            assert f"CREATED {ns}/w3" not in low.log()
        eventually_sync(lambda: "Resuming operations after the pause" in low.log(), timeout=60,
                        message=f"low resumes\n{low.log(3000)}")
        # The resumed operator handles deletions again: kopf's finalizers come off.
        cluster.kubectl_ok("delete", "widgets", "--all", "-n", ns, "--timeout=60s")
