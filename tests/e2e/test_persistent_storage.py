"""Persistent storage as a user sees it with the real kubectl, on a whole cluster with
simulated nodes: the default `standard` class, a claim provisioned on first use on the node
its pod was scheduled to, a claim in use that stays Terminating until its pod is deleted, and
the Delete policy removing the volume and, through its node's kubelet, its directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

MANIFEST = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: writer
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [sleep, "3600"]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
"""


def _json(cluster: Cluster, *args: str) -> dict[str, Any]:
    return dict(json.loads(cluster.kubectl_ok("get", *args, "-o", "json")))


def test_default_class_provisions_on_first_use_and_protects_a_claim_in_use(cluster: Cluster, ns: str) -> None:
    classes = eventually_sync(lambda: cluster.kubectl_ok("get", "sc").splitlines(), timeout=60, interval=1,
                              message="the default StorageClass")
    assert classes[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                                  "ALLOWVOLUMEEXPANSION", "AGE"]
    assert classes[1].split()[:6] == ["standard", "(default)", "picokube.io/local-path", "Delete",
                                      "WaitForFirstConsumer", "false"]

    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=MANIFEST)
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=Ready", "pod/writer", "--timeout=90s")
    node = _json(cluster, "pod", "writer", "-n", ns)["spec"]["nodeName"]
    claim = _json(cluster, "pvc", "data", "-n", ns)
    assert claim["spec"]["storageClassName"] == "standard"
    assert claim["status"]["phase"] == "Bound"
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    volume_name = claim["spec"]["volumeName"]
    assert volume_name == f"pvc-{claim['metadata']['uid']}"
    volume = _json(cluster, "pv", volume_name)
    terms = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]
    directory = Path(volume["spec"]["hostPath"]["path"])
    assert directory.parent == cluster.data_dir / "nodes" / node / "volumes"

    listed = cluster.kubectl_ok("get", "pv,pvc", "-n", ns).splitlines()
    pv_row = next(line.split() for line in listed if line.startswith(f"persistentvolume/{volume_name}"))
    assert pv_row[1:7] == ["1Gi", "RWO", "Delete", "Bound", f"{ns}/data", "standard"]
    pvc_row = next(line.split() for line in listed if line.startswith("persistentvolumeclaim/data"))
    assert pvc_row[1:6] == ["Bound", volume_name, "1Gi", "RWO", "standard"]

    # What the pod would have written (the simulated runtime mounts nothing).
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "file").write_text("kept while the volume exists")

    cluster.kubectl_ok("delete", "pvc", "data", "-n", ns, "--wait=false")
    row = cluster.kubectl_ok("get", "pvc", "data", "-n", ns, "--no-headers").split()
    assert row[1] == "Terminating"
    with pytest.raises(AssertionError):  # the pod still uses it: the claim stays
        eventually_sync(lambda: cluster.kubectl("get", "pvc", "data", "-n", ns).returncode != 0, timeout=5)

    cluster.kubectl_ok("delete", "pod", "writer", "-n", ns, "--wait=true", "--timeout=90s")
    eventually_sync(lambda: cluster.kubectl("get", "pvc", "data", "-n", ns).returncode != 0, timeout=60,
                    interval=1, message="the claim deleted once its pod is gone")
    eventually_sync(lambda: cluster.kubectl("get", "pv", volume_name).returncode != 0, timeout=60, interval=1,
                    message="the Delete policy removes the volume")
    eventually_sync(lambda: not directory.exists(), timeout=60, interval=1,
                    message="the node's kubelet removes the volume's directory")


STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: busybox:1.36
        command: [sleep, "3600"]
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def test_statefulset_pods_get_their_own_provisioned_claims(cluster: Cluster, ns: str) -> None:
    eventually_sync(lambda: cluster.kubectl_ok("get", "sc", "standard", "--ignore-not-found"), timeout=60,
                    interval=1, message="the default StorageClass")
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=STATEFULSET)
    cluster.kubectl_ok("rollout", "status", "-n", ns, "statefulset/db", "--timeout=120s", timeout=150)
    for ordinal in (0, 1):
        pod = _json(cluster, "pod", f"db-{ordinal}", "-n", ns)
        claim = _json(cluster, "pvc", f"data-db-{ordinal}", "-n", ns)
        assert {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{ordinal}"}} in pod["spec"]["volumes"]
        assert claim["status"]["phase"] == "Bound" and claim["metadata"]["labels"] == {"app": "db"}
        volume = _json(cluster, "pv", claim["spec"]["volumeName"])
        expression = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
        assert expression["values"] == [pod["spec"]["nodeName"]]
