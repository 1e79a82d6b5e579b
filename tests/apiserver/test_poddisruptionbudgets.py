"""policy/v1 PodDisruptionBudgets through the API: validation, columns, and the Eviction API honouring them."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.apiserver.conftest import causes

MERGE = {"Content-Type": "application/merge-patch+json"}


def pdbs(ns: str) -> str:
    return f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"


def running_pod(c: httpx.Client, ns: str, labels: dict[str, str], *, ready: bool = True) -> str:
    name = f"p-{uuid.uuid4().hex[:6]}"
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}})
    assert resp.status_code == 201, resp.text
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    resp = c.patch(f"/api/v1/namespaces/{ns}/pods/{name}/status", json={"status": status}, headers=MERGE)
    assert resp.status_code == 200, resp.text
    return name


def new_pdb(c: httpx.Client, ns: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    resp = c.post(pdbs(ns), json={"metadata": {"name": f"b-{uuid.uuid4().hex[:6]}"},
                                  "spec": {"selector": {"matchLabels": labels}, **spec}})
    assert resp.status_code == 201, resp.text
    body: dict[str, Any] = resp.json()
    return body


def set_status(c: httpx.Client, ns: str, pdb: dict[str, Any], **status: Any) -> dict[str, Any]:
    """Write the status the disruption controller would (no controller runs here)."""
    name = pdb["metadata"]["name"]
    body = {"status": {"observedGeneration": pdb["metadata"]["generation"], **status}}
    resp = c.patch(f"{pdbs(ns)}/{name}/status", json=body, headers=MERGE)
    assert resp.status_code == 200, resp.text
    result: dict[str, Any] = resp.json()
    return result


def evict(c: httpx.Client, ns: str, pod: str) -> httpx.Response:
    return c.post(f"/api/v1/namespaces/{ns}/pods/{pod}/eviction",
                  json={"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": ns}})


def test_a_budget_is_either_min_available_or_max_unavailable(c: httpx.Client, ns: str) -> None:
    resp = c.post(pdbs(ns), json={"metadata": {"name": "both"},
                                  "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {}}})
    assert "minAvailable and maxUnavailable cannot be both set" in causes(resp)["spec"]
    resp = c.post(pdbs(ns), json={"metadata": {"name": "bad"},
                                  "spec": {"minAvailable": "120%", "maxUnavailable": None}})
    assert causes(resp)["spec.minAvailable"].endswith("must not be greater than 100%")
    resp = c.post(pdbs(ns), json={"metadata": {"name": "neg"}, "spec": {"maxUnavailable": -1}})
    assert causes(resp)["spec.maxUnavailable"] == "Invalid value: -1: must be greater than or equal to 0"


def test_a_new_budget_has_generation_one_and_an_empty_status(c: httpx.Client, ns: str) -> None:
    pdb = new_pdb(c, ns, {"app": "fresh"}, minAvailable="50%")
    assert pdb["metadata"]["generation"] == 1
    assert pdb["status"]["disruptionsAllowed"] == 0 and pdb["status"]["expectedPods"] == 0
    table = c.get(pdbs(ns), headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [col["name"] for col in table["columnDefinitions"]] == [
        "Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]
    row = next(r for r in table["rows"] if r["cells"][0] == pdb["metadata"]["name"])
    assert row["cells"][1:4] == ["50%", "N/A", 0]


def test_eviction_is_refused_with_429_while_the_budget_allows_no_disruption(c: httpx.Client, ns: str) -> None:
    labels = {"app": "guarded"}
    pod = running_pod(c, ns, labels)
    pdb = new_pdb(c, ns, labels, minAvailable=1)
    set_status(c, ns, pdb, disruptionsAllowed=0, currentHealthy=1, desiredHealthy=1, expectedPods=1)
    resp = evict(c, ns, pod)
    assert resp.status_code == 429, resp.text
    body = resp.json()
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [{"reason": "DisruptionBudget", "message":
                                          f"The disruption budget {pdb['metadata']['name']} needs 1 healthy pods "
                                          "and has 1 currently"}]
    assert c.get(f"/api/v1/namespaces/{ns}/pods/{pod}").status_code == 200


def test_eviction_spends_one_disruption_and_records_the_pod(c: httpx.Client, ns: str) -> None:
    labels = {"app": "spend"}
    first, second = running_pod(c, ns, labels), running_pod(c, ns, labels)
    pdb = new_pdb(c, ns, labels, maxUnavailable=1)
    set_status(c, ns, pdb, disruptionsAllowed=1, currentHealthy=2, desiredHealthy=1, expectedPods=2)
    resp = evict(c, ns, first)
    assert resp.status_code == 201, resp.text
    assert resp.json()["status"] == "Success"
    status = c.get(f"{pdbs(ns)}/{pdb['metadata']['name']}").json()["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == [first]
    assert {"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods"}.items() <= \
        status["conditions"][0].items()
    pod = c.get(f"/api/v1/namespaces/{ns}/pods/{first}").json()
    assert pod["metadata"].get("deletionTimestamp") or pod.get("code") == 404
    assert evict(c, ns, second).status_code == 429


def test_a_budget_the_controller_has_not_seen_yet_refuses_evictions(c: httpx.Client, ns: str) -> None:
    labels = {"app": "unseen"}
    pod = running_pod(c, ns, labels)
    new_pdb(c, ns, labels, maxUnavailable=1)  # status.observedGeneration 0 < generation 1
    resp = evict(c, ns, pod)
    assert resp.status_code == 429, resp.text
    assert "is still being processed by the server" in resp.json()["details"]["causes"][0]["message"]


def test_two_budgets_over_one_pod_are_a_500(c: httpx.Client, ns: str) -> None:
    labels = {"app": "twice"}
    pod = running_pod(c, ns, labels)
    for _ in range(2):
        set_status(c, ns, new_pdb(c, ns, labels, maxUnavailable=1), disruptionsAllowed=1)
    resp = evict(c, ns, pod)
    assert resp.status_code == 500, resp.text
    assert resp.json()["message"] == ("This pod has more than one PodDisruptionBudget, which the eviction "
                                      "subresource does not support.")


def test_pending_and_uncovered_pods_are_evicted_regardless(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "pending", "labels": {"app": "guarded-pending"}},
        "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}})
    assert resp.status_code == 201
    set_status(c, ns, new_pdb(c, ns, {"app": "guarded-pending"}, minAvailable=5), disruptionsAllowed=0)
    assert evict(c, ns, "pending").status_code == 201
    assert evict(c, ns, running_pod(c, ns, {"app": "free"})).status_code == 201
