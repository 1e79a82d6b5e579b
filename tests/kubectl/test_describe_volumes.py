"""`pkctl describe pod` shows each container's mounts and the pod's volumes in kubectl's words."""

from __future__ import annotations

from kubectl.describe_text import Section
from kubectl.describe_volumes import describe_mounts, describe_volumes


def test_mounts_and_volumes_read_as_kubectl_prints_them() -> None:
    s = Section()
    describe_mounts(s, {"volumeMounts": [
        {"name": "kube-api-access-abcde", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
         "readOnly": True},
        {"name": "data", "mountPath": "/data", "subPath": "app"}]}, 1)
    describe_volumes(s, [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "config", "configMap": {"name": "settings", "optional": True}},
        {"name": "kube-api-access-abcde", "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt"}}, {"downwardAPI": {"items": []}}]}}])
    assert s.render().splitlines() == [
        "  Mounts:",
        '    /data from data (rw,path="app")',
        "    /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-abcde (ro)",
        "Volumes:",
        "  data:",
        "    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)",
        "    ClaimName:  data",
        "    ReadOnly:   false",
        "  config:",
        "    Type:      ConfigMap (a volume populated by a ConfigMap)",
        "    Name:      settings",
        "    Optional:  true",
        "  kube-api-access-abcde:",
        "    Type:                    Projected (a volume that contains injected data from multiple sources)",
        "    TokenExpirationSeconds:  3607",
        "    ConfigMapName:           kube-root-ca.crt",
        "    Optional:                false",
        "    DownwardAPI:             true",
    ]


def test_a_container_without_mounts_says_none() -> None:
    s = Section()
    describe_mounts(s, {}, 0)
    describe_volumes(s, [])
    assert s.render().splitlines() == ["Mounts:   <none>", "Volumes:  <none>"]
