"""Pod volumes and volume mounts are refused as upstream refuses them, every error at once."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from apiserver.registry.pod_validation import validate_pod_spec


def errors(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> dict[str, str]:
    spec = {"containers": [{"name": "c", "image": "busybox", "volumeMounts": mounts}], "volumes": volumes}
    return {e.field: e.message for e in validate_pod_spec(spec, "spec")}


def test_declared_and_mounted_volumes_pass() -> None:
    assert errors([{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "settings"}}],
                  [{"name": "data", "mountPath": "/data", "subPath": "a/b"}, {"name": "cfg", "mountPath": "/etc/c"}]
                  ) == {}


@pytest.mark.parametrize(("volumes", "mounts", "field", "message"), [
    ([], [{"name": "data", "mountPath": "/data"}], "spec.containers[0].volumeMounts[0].name", 'Not found: "data"'),
    ([{"name": "d", "emptyDir": {}}], [{"name": "d"}], "spec.containers[0].volumeMounts[0].mountPath",
     "Required value"),
    ([{"name": "d", "emptyDir": {}}], [{"name": "d", "mountPath": "/x"}, {"name": "d", "mountPath": "/x"}],
     "spec.containers[0].volumeMounts[1].mountPath", 'Invalid value: "/x": must be unique'),
    ([{"name": "d", "emptyDir": {}}], [{"name": "d", "mountPath": "/x", "subPath": "../etc"}],
     "spec.containers[0].volumeMounts[0].subPath", "Invalid value: \"../etc\": must not contain '..'"),
    ([{"name": "d", "emptyDir": {}}], [{"name": "d", "mountPath": "/x", "subPath": "/etc"}],
     "spec.containers[0].volumeMounts[0].subPath", 'Invalid value: "/etc": must be a relative path'),
    ([{"name": "d"}], [], "spec.volumes[0]", "Required value: must specify a volume type"),
    ([{"name": "d", "emptyDir": {}, "hostPath": {"path": "/x"}}], [], "spec.volumes[0].hostPath",
     "Forbidden: may not specify more than 1 volume type"),
    ([{"name": "d", "emptyDir": {}}, {"name": "d", "emptyDir": {}}], [], "spec.volumes[1].name",
     'Duplicate value: "d"'),
    ([{"name": "d", "secret": {}}], [], "spec.volumes[0].secret.secretName", "Required value"),
    ([{"name": "d", "persistentVolumeClaim": {}}], [], "spec.volumes[0].persistentVolumeClaim.claimName",
     "Required value"),
])
def test_a_bad_volume_or_mount_is_refused_at_upstreams_path(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]],
                                                            field: str, message: str) -> None:
    found = errors(volumes, mounts)
    assert found.get(field) == message, found


def test_the_api_refuses_a_mount_of_an_undeclared_volume(c: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "bad"}, "spec": {
        "containers": [{"name": "c", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert resp.status_code == 422
    assert resp.json()["message"] == 'Pod "bad" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"'
    deployment = {"metadata": {"name": "bad"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": pod["spec"]}}}
    resp = c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment)
    assert resp.status_code == 422
    assert "spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\"" in resp.json()["message"]
