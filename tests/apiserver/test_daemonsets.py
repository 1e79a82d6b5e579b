"""DaemonSets and ControllerRevisions through the API: defaults, validation, discovery and tables."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from apiserver.endpoints.tables import to_table
from tests.apiserver.conftest import causes

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def daemonset(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, **spec}}


def test_defaults_and_status(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets", json=daemonset("d"))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert body["spec"]["revisionHistoryLimit"] == 10
    assert body["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert body["metadata"]["generation"] == 1
    assert body["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    path = f"/apis/apps/v1/namespaces/{ns}/daemonsets/d"
    merge = {"Content-Type": "application/merge-patch+json"}
    relabeled = c.patch(path, json={"metadata": {"labels": {"x": "y"}}}, headers=merge).json()
    assert relabeled["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    changed = c.patch(path, json={"spec": {"template": {"metadata": {"annotations": {"v": "2"}}}}},
                      headers=merge).json()
    assert changed["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    assert changed["metadata"]["generation"] == 2
    on_delete = c.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets",
                       json=daemonset("od", updateStrategy={"type": "OnDelete"})).json()
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_validation_messages(c: httpx.Client, ns: str) -> None:
    bad = daemonset("bad", updateStrategy={"type": "RollingUpdate",
                                           "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}})
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    bad["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    found = causes(c.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets", json=bad))
    assert found["spec.template.metadata.labels"].endswith("`selector` does not match template `labels`")
    assert found["spec.template.spec.restartPolicy"] == 'Unsupported value: "OnFailure": supported values: "Always"'
    assert found["spec.updateStrategy.rollingUpdate.maxUnavailable"] == \
        "Invalid value: 0: cannot be 0 when maxSurge is 0"
    both = daemonset("both", updateStrategy={"type": "RollingUpdate",
                                             "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}})
    found = causes(c.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets", json=both))
    assert found["spec.updateStrategy.rollingUpdate.maxSurge"] == \
        'Invalid value: "10%": may not be set when maxUnavailable is non-zero'
    kind = daemonset("kind", updateStrategy={"type": "Recreate"})
    found = causes(c.post(f"/apis/apps/v1/namespaces/{ns}/daemonsets", json=kind))
    assert found["spec.updateStrategy.type"] == \
        'Unsupported value: "Recreate": supported values: "OnDelete", "RollingUpdate"'


def test_selector_is_immutable(c: httpx.Client, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/daemonsets"
    assert c.post(path, json=daemonset("imm")).status_code == 201
    patch = {"spec": {"selector": {"matchLabels": {"app": "imm", "x": "y"}},
                      "template": {"metadata": {"labels": {"app": "imm", "x": "y"}}}}}
    resp = c.patch(f"{path}/imm", json=patch, headers={"Content-Type": "application/merge-patch+json"})
    assert causes(resp)["spec.selector"].endswith("field is immutable")


def test_controller_revision_data_is_required_and_immutable(c: httpx.Client, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/controllerrevisions"
    assert causes(c.post(path, json={"metadata": {"name": "r0"}, "revision": 1}))["data"] == \
        "Required value: data is mandatory"
    resp = c.post(path, json={"metadata": {"name": "r1"}, "revision": 1, "data": {"spec": {}}})
    assert resp.status_code == 201, resp.text
    resp = c.patch(f"{path}/r1", json={"data": {"spec": {"x": 1}}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert "data" in causes(resp)


def test_discovery(c: httpx.Client) -> None:
    resources = {r["name"]: r for r in c.get("/apis/apps/v1").json()["resources"]}
    assert resources["daemonsets"]["shortNames"] == ["ds"]
    assert resources["daemonsets"]["categories"] == ["all"]
    assert "daemonsets/status" in resources
    assert resources["controllerrevisions"]["namespaced"] is True


def test_tables() -> None:
    ds = {"metadata": {"name": "fluentd", "creationTimestamp": "2024-05-01T11:55:00Z"},
          "spec": {"selector": {"matchLabels": {"app": "f"}},
                   "template": {"spec": {"nodeSelector": {"disk": "ssd"},
                                         "containers": [{"name": "c", "image": "fluentd:1"}]}}},
          "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                     "updatedNumberScheduled": 1, "numberAvailable": 2}}
    table = to_table("DaemonSet", [ds], now=NOW)
    assert [(col["name"], col["priority"]) for col in table["columnDefinitions"]] == [
        ("Name", 0), ("Desired", 0), ("Current", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0),
        ("Node Selector", 0), ("Age", 0), ("Containers", 1), ("Images", 1), ("Selector", 1)]
    assert table["rows"][0]["cells"] == ["fluentd", 3, 3, 2, 1, 2, "disk=ssd", "5m", "c", "fluentd:1", "app=f"]
    cr = {"metadata": {"name": "fluentd-5d4b", "creationTimestamp": "2024-05-01T11:55:00Z",
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "fluentd",
                                            "uid": "u", "controller": True}]}, "revision": 2}
    table = to_table("ControllerRevision", [cr], now=NOW)
    assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Controller", "Revision", "Age"]
    assert table["rows"][0]["cells"] == ["fluentd-5d4b", "daemonset.apps/fluentd", 2, "5m"]
