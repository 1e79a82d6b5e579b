"""Server-side Tables: upstream's columns and cells, checked on the Table itself and on what the
real kubectl prints from it, plus the built-in PriorityClasses the server creates at start."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.endpoints.tables import to_table
from kube.testing.apiserver import ApiServerHarness
from kube.testing.kubectl import sdk_bin

SDK_BIN = sdk_bin()
VERSIONS = [v for v in ("kubectl", "kubectl.1.27", "kubectl.1.33") if (SDK_BIN / v).exists()]
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
NS = "tables"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def ago(seconds: int) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def kubectl(api: ApiServerHarness, tmp_path: Path, *args: str, binary: str = "kubectl") -> list[list[str]]:
    """`kubectl ARGS` as the admin, its output split into rows of whitespace-separated words."""
    out = subprocess.run([str(SDK_BIN / binary), "--kubeconfig", str(api.kubeconfig("admin")),
                          "--cache-dir", str(tmp_path), *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.split() for line in out.stdout.splitlines()]


def columns(kind: str) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in to_table(kind, [], now=NOW)["columnDefinitions"]]


# --- the Table itself (pure) ---------------------------------------------------------------

@pytest.mark.parametrize(("kind", "expected"), [
    ("ServiceAccount", [("Name", "string", 0), ("Secrets", "string", 0), ("Age", "string", 0)]),
    ("ClusterRole", [("Name", "string", 0), ("Created At", "date", 0)]),
    ("Role", [("Name", "string", 0), ("Created At", "date", 0)]),
    ("LimitRange", [("Name", "string", 0), ("Created At", "date", 0)]),
    ("RoleBinding", [("Name", "string", 0), ("Role", "string", 0), ("Age", "string", 0), ("Users", "string", 1),
                     ("Groups", "string", 1), ("ServiceAccounts", "string", 1)]),
    ("PriorityClass", [("Name", "string", 0), ("Value", "integer", 0), ("Global-Default", "boolean", 0),
                       ("Age", "string", 0), ("PreemptionPolicy", "string", 0)]),
    ("ResourceQuota", [("Name", "string", 0), ("Age", "string", 0), ("Request", "string", 0),
                       ("Limit", "string", 0)]),
    ("Event", [("Last Seen", "string", 0), ("Type", "string", 0), ("Reason", "string", 0), ("Object", "string", 0),
               ("Subobject", "string", 1), ("Source", "string", 1), ("Message", "string", 0),
               ("First Seen", "string", 1), ("Count", "string", 1), ("Name", "string", 1)]),
    ("Pod", [("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "string", 0),
             ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1), ("Nominated Node", "string", 1),
             ("Readiness Gates", "string", 1)]),
])
def test_columns_follow_upstream(kind: str, expected: list[tuple[str, str, int]]) -> None:
    assert columns(kind) == expected


def pod(**status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "creationTimestamp": ago(600)},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]}, "status": {"phase": "Running", **status}}


def running(restarts: int = 0, finished: str | None = None, ready: bool = True) -> dict[str, Any]:
    cs: dict[str, Any] = {"ready": ready, "restartCount": restarts, "state": {"running": {}}}
    if finished:
        cs["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": finished}}
    return cs


@pytest.mark.parametrize(("status", "cells"), [
    ({"containerStatuses": [running(), running()]}, ["2/2", "Running", "0"]),
    ({"containerStatuses": [running(3, ago(5)), running(1, ago(90))]}, ["2/2", "Running", "4 (5s ago)"]),
    ({"containerStatuses": [running(), {"ready": False, "restartCount": 7, "lastState": {"terminated": {
        "finishedAt": ago(30)}}, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
     ["1/2", "CrashLoopBackOff", "7 (30s ago)"]),
    ({"containerStatuses": [running(2)]}, ["1/2", "Running", "2"]),  # no finish time: no "(ago)"
    ({"phase": "Pending", "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]},
     ["0/2", "ContainerCreating", "0"]),
])
def test_pod_ready_status_and_restarts(status: dict[str, Any], cells: list[str]) -> None:
    row = to_table("Pod", [pod(**status)], now=NOW)["rows"][0]
    assert row["cells"][1:4] == cells
    assert row["cells"][4] == "10m"


def test_finished_pods_carry_the_completed_row_condition() -> None:
    row = to_table("Pod", [pod(phase="Succeeded")], now=NOW)["rows"][0]
    assert row["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                  "message": "The pod has completed successfully."}]


def test_event_cells_in_wide_order() -> None:
    event = {"metadata": {"name": "p.1"}, "type": "Warning", "reason": "BackOff", "message": " Back-off \n",
             "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{a}"},
             "source": {"component": "kubelet", "host": "node-1"}, "count": 3,
             "firstTimestamp": ago(300), "lastTimestamp": ago(20)}
    assert to_table("Event", [event], now=NOW)["rows"][0]["cells"] == [
        "20s", "Warning", "BackOff", "pod/p", "spec.containers{a}", "kubelet, node-1", "Back-off", "5m", 3, "p.1"]


def test_binding_subjects_and_quota_columns() -> None:
    binding = {"metadata": {"name": "b", "creationTimestamp": ago(60)},
               "roleRef": {"kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "User", "name": "jane"}, {"kind": "Group", "name": "devs"},
                            {"kind": "User", "name": "joe"},
                            {"kind": "ServiceAccount", "name": "ci", "namespace": "x"}]}
    assert to_table("ClusterRoleBinding", [binding], now=NOW)["rows"][0]["cells"] == [
        "b", "ClusterRole/view", "60s", "jane, joe", "devs", "x/ci"]
    quota = {"metadata": {"name": "q", "creationTimestamp": ago(60)},
             "status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
                        "used": {"pods": "3", "limits.cpu": "500m"}}}
    assert to_table("ResourceQuota", [quota], now=NOW)["rows"][0]["cells"] == [
        "q", "60s", "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2"]
    role = {"metadata": {"name": "r", "creationTimestamp": ago(60)}}
    assert to_table("Role", [role], now=NOW)["rows"][0]["cells"] == ["r", "2024-05-01T11:59:00Z"]


# --- what the real kubectl prints ------------------------------------------------------

@pytest.fixture(scope="module")
def objects(admin_http: httpx.Client) -> None:
    """A namespace holding one object of several kinds."""
    admin_http.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    for path, body in [
        (f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "robot"}}),
        (f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}}),
        (f"/api/v1/namespaces/{NS}/secrets", {"metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "dg=="}}),
        (f"/api/v1/namespaces/{NS}/limitranges", {"metadata": {"name": "limits"}, "spec": {"limits": [
            {"type": "Container", "default": {"cpu": "100m"}}]}}),
        (f"{rbac}/namespaces/{NS}/roles", {"metadata": {"name": "reader"}, "rules": []}),
        (f"{rbac}/namespaces/{NS}/rolebindings", {
            "metadata": {"name": "robot-reads"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                             "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": NS},
                         {"kind": "User", "name": "jane"}]}),
        (f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", {"metadata": {"name": "lock"},
                                                                  "spec": {"holderIdentity": "me"}}),
        (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "web"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
    ]:
        resp = admin_http.post(path, json=body)
        assert resp.status_code == 201, resp.text


@pytest.mark.parametrize("binary", VERSIONS)
def test_kubectl_prints_upstream_columns(api: ApiServerHarness, objects: None, tmp_path: Path, binary: str) -> None:
    def k(*args: str) -> list[list[str]]:
        return kubectl(api, tmp_path, "-n", NS, *args, binary=binary)

    for what, header, first_cells in [
        (("sa", "robot"), ["NAME", "SECRETS", "AGE"], ["robot", "0"]),
        (("cm", "cfg"), ["NAME", "DATA", "AGE"], ["cfg", "2"]),
        (("secret", "s"), ["NAME", "TYPE", "DATA", "AGE"], ["s", "Opaque", "1"]),
        (("lease", "lock"), ["NAME", "HOLDER", "AGE"], ["lock", "me"]),
    ]:
        rows = k("get", *what)
        assert rows[0] == header and rows[1][:len(first_cells)] == first_cells, rows
    for what in (("role", "reader"), ("limits", "limits")):
        header, row = k("get", *what)[:2]
        assert header == ["NAME", "CREATED", "AT"]
        assert row[0] == what[1] and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row[1])
    assert k("get", "rolebinding", "robot-reads")[0] == ["NAME", "ROLE", "AGE"]
    wide = k("get", "rolebinding", "robot-reads", "-o", "wide")
    assert wide[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert wide[1][:2] == ["robot-reads", "Role/reader"] and wide[1][-2:] == ["jane", f"{NS}/robot"]


def test_kubectl_pod_restarts_show_the_last_restart(api: ApiServerHarness, objects: None,
                                                    admin_http: httpx.Client, tmp_path: Path) -> None:
    finished = (datetime.now(UTC) - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    resp = admin_http.patch(f"/api/v1/namespaces/{NS}/pods/web/status", json={"status": {
        "phase": "Running", "containerStatuses": [{
            "name": "c", "image": "busybox", "imageID": "", "ready": True, "restartCount": 3,
            "state": {"running": {"startedAt": finished}},
            "lastState": {"terminated": {"exitCode": 1, "finishedAt": finished}}}]}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert resp.status_code == 200, resp.text
    header, row = kubectl(api, tmp_path, "-n", NS, "get", "pods", "web")[:2]
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert row[:3] == ["web", "1/1", "Running"]
    assert re.fullmatch(r"3 \(\d+s ago\)", " ".join(row[3:6])), row


def test_system_priority_classes_exist(api: ApiServerHarness, admin_http: httpx.Client, tmp_path: Path) -> None:
    rows = kubectl(api, tmp_path, "get", "pc")
    assert rows[0] == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    by_name = {r[0]: r for r in rows[1:]}
    assert by_name["system-node-critical"][1:3] == ["2000001000", "false"]
    assert by_name["system-cluster-critical"][1:3] == ["2000000000", "false"]
    assert by_name["system-cluster-critical"][-1] == "PreemptLowerPriority"
    pc = admin_http.get("/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical").json()
    assert pc["description"] == "Used for system critical pods that must not be moved from their current node."
    assert pc["preemptionPolicy"] == "PreemptLowerPriority" and pc["value"] == 2000001000
    table = admin_http.get("/apis/scheduling.k8s.io/v1/priorityclasses", headers={"Accept": TABLE}).json()
    assert {r["cells"][0]: r["cells"][2] for r in table["rows"]}["system-cluster-critical"] is False
