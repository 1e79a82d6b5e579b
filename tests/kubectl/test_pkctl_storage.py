"""pkctl and persistent storage against a real API server: `get pv,pvc,sc` with kubectl's
columns, and `describe` of a volume, a claim (with the pods that use it) and a class."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from kube.testing.apiserver import ApiServerHarness

pytestmark = pytest.mark.timeout(120)


def pkctl(api: ApiServerHarness, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubectl", "--kubeconfig", str(api.kubeconfig("admin")), *args],
                          capture_output=True, text=True, timeout=60, input=stdin)


def test_get_and_describe_volumes_claims_and_classes(api: ApiServerHarness) -> None:
    ns, cls, pv = f"pk-{uuid.uuid4().hex[:6]}", f"gold-{uuid.uuid4().hex[:6]}", f"pv-{uuid.uuid4().hex[:6]}"
    manifest = f"""\
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {cls}}}
provisioner: example.com/disk
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {pv}}}
spec:
  capacity: {{storage: 2Gi}}
  accessModes: [ReadWriteOnce]
  storageClassName: {cls}
  hostPath: {{path: /srv/{pv}, type: DirectoryOrCreate}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{{key: kubernetes.io/hostname, operator: In, values: [node-1]}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {cls}
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: user, namespace: {ns}}}
spec:
  containers: [{{name: c, image: busybox:1.36}}]
  volumes: [{{name: d, persistentVolumeClaim: {{claimName: data}}}}]
"""
    applied = pkctl(api, "apply", "-f", "-", stdin=manifest)
    assert applied.returncode == 0, applied.stderr
    claims = pkctl(api, "get", "pvc", "-n", ns).stdout.splitlines()
    assert claims[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                 "VOLUMEATTRIBUTESCLASS", "AGE"]
    row = claims[1].split()
    assert row[:2] == ["data", "Pending"] and cls in row
    volumes = pkctl(api, "get", "pv", pv).stdout.splitlines()
    assert volumes[1].split()[:5] == [pv, "2Gi", "RWO", "Retain", "Pending"] and cls in volumes[1].split()
    classes = pkctl(api, "get", "sc", cls).stdout.splitlines()
    assert classes[1].split()[:4] == [cls, "example.com/disk", "Delete", "WaitForFirstConsumer"]

    claim_text = pkctl(api, "describe", "pvc", "data", "-n", ns).stdout
    for line in (f"StorageClass:  {cls}", "Status:        Pending", "Finalizers:    [kubernetes.io/pvc-protection]",
                 "Used By:       user"):
        assert line in claim_text, claim_text
    volume_text = pkctl(api, "describe", "pv", pv).stdout
    for line in ("Reclaim Policy:  Retain", "Term 0:  kubernetes.io/hostname in [node-1]",
                 "Type:          HostPath (bare host directory volume)", f"Path:          /srv/{pv}"):
        assert line in volume_text, volume_text
    class_text = pkctl(api, "describe", "sc", cls).stdout
    for line in ("IsDefaultClass:        No", "Provisioner:           example.com/disk",
                 "VolumeBindingMode:     WaitForFirstConsumer"):
        assert line in class_text, class_text
