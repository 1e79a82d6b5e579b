"""Property tests: random and mutated objects thrown at create and update never get a 500, and
whatever is rejected leaves nothing behind (no new object; an update leaves the old one as it was)."""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.timeout(300)

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**40, max_value=2**40),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30),
                    st.sampled_from(["", "-1", "100m", "1e3", "Always", "a" * 300, "UPPER", "x/y", "💥"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.text(max_size=12), inner, max_size=3)),
                    max_leaves=8)

POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "x"}},
       "spec": {"restartPolicy": "Always", "containers": [
           {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]}}
DEPLOYMENT: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                       "template": {"metadata": {"labels": {"app": "x"}},
                                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
KINDS = {"pods": ("/api/v1/namespaces/{ns}/pods", POD), "deployments": ("/apis/apps/v1/namespaces/{ns}/deployments",
                                                                        DEPLOYMENT)}


def paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(paths(v, (*prefix, i)))
    return out


def mutate(base: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    obj = copy.deepcopy(base)
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return obj


def _name(body: Any) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
        name = body["metadata"].get("name")
        return name if isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,200}", name) and \
            name not in (".", "..") else None
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(KINDS)), data=st.data(), value=JSON, delete=st.booleans())
def test_create_never_500_and_rejections_store_nothing(c: httpx.Client, ns: str, kind: str, data: st.DataObject,
                                                       value: Any, delete: bool) -> None:
    base_path, template = KINDS[kind]
    base = copy.deepcopy(template)
    base["metadata"]["name"] = f"f-{uuid.uuid4().hex[:10]}"
    path = data.draw(st.sampled_from(paths(base)))
    body = mutate(base, path, value, delete and bool(path))
    url = base_path.format(ns=ns)
    resp = c.post(url, json=body)
    assert resp.status_code < 500, (body, resp.text)
    status = resp.json()
    if resp.status_code >= 400:
        assert status["kind"] == "Status" and status["code"] == resp.status_code and status["message"]
        name = _name(body)
        if name is not None and resp.status_code != 409:
            assert c.get(f"{url}/{name}").status_code == 404, (body, resp.text)
    else:
        c.delete(f"{url}/{status['metadata']['name']}", params={"gracePeriodSeconds": 0})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), value=JSON, delete=st.booleans())
def test_update_never_500_and_rejections_change_nothing(c: httpx.Client, ns: str, data: st.DataObject, value: Any,
                                                        delete: bool) -> None:
    url = KINDS["deployments"][0].format(ns=ns)
    name = f"u-{uuid.uuid4().hex[:10]}"
    created = c.post(url, json={**DEPLOYMENT, "metadata": {"name": name}})
    assert created.status_code == 201, created.text
    live = created.json()
    path = data.draw(st.sampled_from([p for p in paths(live) if p[:2] != ("metadata", "managedFields")]))
    body = mutate(live, path, value, delete and bool(path))
    resp = c.put(f"{url}/{name}", json=body)
    assert resp.status_code < 500, (body, resp.text)
    if resp.status_code >= 400:
        after = c.get(f"{url}/{name}").json()
        assert after["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"], (body, resp.text)
    c.delete(f"{url}/{name}")


def test_wrong_json_types_are_400_in_kubernetes_words(c: httpx.Client, ns: str) -> None:
    url = KINDS["deployments"][0].format(ns=ns)
    resp = c.post(url, json={**DEPLOYMENT, "metadata": {"name": True}})
    assert resp.status_code == 400
    assert resp.json()["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
                                      "unmarshal bool into Go struct field metadata.name of type string")
    bad_replicas = copy.deepcopy(DEPLOYMENT)
    bad_replicas["metadata"]["name"] = "typed"
    bad_replicas["spec"]["replicas"] = "3"
    assert c.post(url, json=bad_replicas).status_code == 400
    # Quantities decode from JSON numbers too, as `cpu: 1` in YAML gives.
    numeric = copy.deepcopy(POD)
    numeric["metadata"]["name"] = "numeric-cpu"
    numeric["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 1}}
    assert c.post(KINDS["pods"][0].format(ns=ns), json=numeric).status_code == 201
