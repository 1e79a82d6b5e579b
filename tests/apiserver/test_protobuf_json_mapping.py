"""The protobuf <-> JSON mapping gives back the JSON Kubernetes writes (table-driven round trips)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.protobuf.codec import decode_object, encode_object

CASES: list[dict[str, Any]] = [
    {"kind": "Deployment", "apiVersion": "apps/v1",
     "metadata": {"name": "d", "namespace": "n", "creationTimestamp": "2026-12-04T15:52:54Z", "labels": {"a": "b"},
                  "managedFields": [{"manager": "m", "operation": "Update", "time": "2026-12-04T15:52:54Z",
                                     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
     "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
              "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
              "template": {"metadata": {"creationTimestamp": None, "labels": {"a": "b"}},
                           "spec": {"containers": [{"name": "c", "image": "i",
                                                    "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}]}}},
     "status": {}},
    {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s", "creationTimestamp": None},
     "data": {"p": "aHVudGVyMg=="}, "type": "Opaque"},
    {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "l", "creationTimestamp": None},
     "spec": {"holderIdentity": "me", "renewTime": "2026-12-04T15:52:54.123456Z", "leaseDurationSeconds": 15}},
    {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": []},
]


@pytest.mark.parametrize("obj", CASES, ids=[c["kind"] for c in CASES])
def test_round_trip(obj: dict[str, Any]) -> None:
    body = encode_object(obj)
    assert body is not None and body.startswith(b"k8s\x00")
    assert decode_object(body) == obj


def test_a_kind_without_a_message_is_not_encoded() -> None:
    assert encode_object({"kind": "Widget", "apiVersion": "example.com/v1", "metadata": {"name": "w"}}) is None


def test_inline_structs_sit_in_the_parent_object() -> None:
    """A Probe's handler and a Volume's source are fields of their own in protobuf, inline in JSON."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "x",
                                    "livenessProbe": {"httpGet": {"port": 8080, "path": "/"}, "periodSeconds": 10}}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}
    decoded = decode_object(encode_object(pod) or b"")
    assert decoded["spec"]["containers"][0]["livenessProbe"] == {"httpGet": {"path": "/", "port": 8080},
                                                                 "periodSeconds": 10}
    assert decoded["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]
