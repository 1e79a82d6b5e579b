"""Pod admission as kube-apiserver's default chain applies it: ServiceAccount,
DefaultTolerationSeconds, Priority and LimitRanger; rejections are 403 and store nothing."""

from __future__ import annotations

import asyncio
import ssl
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness


@pytest.fixture
def c(admin_http: httpx.Client) -> httpx.Client:
    return admin_http


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    """The whole default chain, ServiceAccount included (the shared harness leaves it out)."""
    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint,
                          disable_admission_plugins=()) as harness:
        yield harness


@pytest.fixture
def ns(c: httpx.Client) -> str:
    """A namespace with the `default` ServiceAccount its controller would create."""
    name = f"adm-{uuid.uuid4().hex[:6]}"
    assert c.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    assert c.post(f"/api/v1/namespaces/{name}/serviceaccounts",
                  json={"metadata": {"name": "default"}}).status_code == 201
    return name


def pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", **spec.pop("container", {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def test_service_account_tolerations_and_priority_defaults(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("plain"))
    assert resp.status_code == 201, resp.text
    spec = resp.json()["spec"]
    assert spec["serviceAccountName"] == "default"
    assert spec["priority"] == 0
    tolerations = {t["key"]: t for t in spec["tolerations"]}
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        assert tolerations[key] == {"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": 300}

    own = pod("own", tolerations=[{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                   "effect": "NoExecute", "tolerationSeconds": 5}])
    spec = c.post(f"/api/v1/namespaces/{ns}/pods", json=own).json()["spec"]
    assert [t["tolerationSeconds"] for t in spec["tolerations"] if t["key"].endswith("unreachable")] == [5]


def test_priority_class_resolution(c: httpx.Client, ns: str) -> None:
    name = f"high-{uuid.uuid4().hex[:6]}"
    resp = c.post("/apis/scheduling.k8s.io/v1/priorityclasses",
                  json={"metadata": {"name": name}, "value": 1000, "preemptionPolicy": "Never"})
    assert resp.status_code == 201, resp.text
    spec = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("hi", priorityClassName=name)).json()["spec"]
    assert spec["priority"] == 1000 and spec["preemptionPolicy"] == "Never"
    crit = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("crit", priorityClassName="system-node-critical"))
    assert crit.json()["spec"]["priority"] == 2000001000

    missing = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("nope", priorityClassName="no-such-class"))
    assert missing.status_code == 403
    assert missing.json()["message"] == 'pods "nope" is forbidden: no PriorityClass with name no-such-class was found'
    wrong = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("wrong", priorityClassName=name, priority=7))
    assert wrong.status_code == 403 and "must not be provided in pod spec" in wrong.json()["message"]
    for gone in ("nope", "wrong"):
        assert c.get(f"/api/v1/namespaces/{ns}/pods/{gone}").status_code == 404


def test_limit_range_defaults_and_bounds(c: httpx.Client, ns: str) -> None:
    lr = {"metadata": {"name": "limits"}, "spec": {"limits": [{
        "type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
        "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "1", "memory": "1Gi"}}]}}
    assert c.post(f"/api/v1/namespaces/{ns}/limitranges", json=lr).status_code == 201
    resources = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("defaulted")).json()["spec"]["containers"][0]
    assert resources["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                      "requests": {"cpu": "100m", "memory": "256Mi"}}
    big = pod("big", container={"resources": {"limits": {"cpu": "2"}}})
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=big)
    assert resp.status_code == 403
    assert resp.json()["message"] == 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    assert c.get(f"/api/v1/namespaces/{ns}/pods/big").status_code == 404


def test_resource_quota_holds_under_concurrent_creates(api: ApiServerHarness, c: httpx.Client, ns: str) -> None:
    quota = {"metadata": {"name": "small"}, "spec": {"hard": {"pods": "3", "requests.cpu": "1"}}}
    assert c.post(f"/api/v1/namespaces/{ns}/resourcequotas", json=quota).status_code == 201

    async def create_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=api.server, timeout=30,
                                     verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                                     headers={"Authorization": f"Bearer {api.token('admin')}"}) as ac:
            small = {"resources": {"requests": {"cpu": "100m"}}}
            return list(await asyncio.gather(*(ac.post(f"/api/v1/namespaces/{ns}/pods",
                                                       json=pod(f"q{i}", container=small))
                                               for i in range(8))))

    results = asyncio.run(create_all())
    codes = sorted(r.status_code for r in results)
    assert codes == [201] * 3 + [403] * 5, [r.text for r in results]
    denied = next(r for r in results if r.status_code == 403).json()
    assert denied["reason"] == "Forbidden"
    assert "exceeded quota: small, requested: pods=1, used: pods=3, limited: pods=3" in denied["message"]
    assert len(c.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]) == 3
    used = c.get(f"/api/v1/namespaces/{ns}/resourcequotas/small").json()["status"]
    assert used["hard"] == {"pods": "3", "requests.cpu": "1"} and used["used"]["pods"] == "3"
    assert used["used"]["requests.cpu"] == "300m"

    # Freed quota is usable again: usage is counted from the pods that exist.
    created = next(r.json()["metadata"]["name"] for r in results if r.status_code == 201)
    assert c.delete(f"/api/v1/namespaces/{ns}/pods/{created}", params={"gracePeriodSeconds": 0}).status_code == 200
    unspecified = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("bare"))
    assert unspecified.status_code == 403
    assert unspecified.json()["message"] == \
        'pods "bare" is forbidden: failed quota: small: must specify requests.cpu for: c'
    again = c.post(f"/api/v1/namespaces/{ns}/pods",
                   json=pod("again", container={"resources": {"requests": {"cpu": "100m"}}}))
    assert again.status_code == 201, again.text
    cpu = c.post(f"/api/v1/namespaces/{ns}/pods",
                 json=pod("hungry", container={"resources": {"requests": {"cpu": "2"}}}))
    assert cpu.status_code == 403 and "requests.cpu=2" in cpu.json()["message"]


def test_system_namespaces_cannot_be_deleted_and_missing_ones_take_nothing(c: httpx.Client) -> None:
    for name in ("default", "kube-system", "kube-public"):
        resp = c.delete(f"/api/v1/namespaces/{name}")
        assert resp.status_code == 403
        assert resp.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        assert c.get(f"/api/v1/namespaces/{name}").json()["status"]["phase"] == "Active"
    missing = c.post("/api/v1/namespaces/no-such-ns/pods", json=pod("p"))
    assert missing.status_code == 404 and missing.json()["message"] == 'namespaces "no-such-ns" not found'
