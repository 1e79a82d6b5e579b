"""The browser view's routes: its files are public and hold no data; its data needs a token like the API."""

from __future__ import annotations

import ssl
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync


@pytest.fixture(scope="module")
def anonymous(api: ApiServerHarness) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      timeout=30) as client:
        yield client


@pytest.mark.parametrize(("path", "media"), [("/ui/", "text/html"), ("/ui/index.html", "text/html"),
                                             ("/ui/app.js", "text/javascript"), ("/ui/app.css", "text/css")])
def test_the_pages_files_are_served_to_anyone(anonymous: httpx.Client, path: str, media: str) -> None:
    r = anonymous.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith(media)
    assert "default-src 'self'" in r.headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/ui/__init__.py", "/ui/..%2Fserver.py", "/ui/nothing.js", "/ui/.hidden.js"])
def test_nothing_else_is_served_from_there(anonymous: httpx.Client, path: str) -> None:
    assert anonymous.get(path).status_code == 404


def test_the_ui_root_redirects_to_the_page(anonymous: httpx.Client) -> None:
    r = anonymous.get("/ui")
    assert r.status_code == 301 and r.headers["location"] == "/ui/"


@pytest.mark.parametrize("path", ["/debug/traces/chain?object=Deployment/default/web", "/debug/traces/recent",
                                  "/api/v1/nodes"])
def test_the_pages_data_needs_a_token(anonymous: httpx.Client, path: str) -> None:
    assert anonymous.get(path).status_code == 401


def test_the_chain_of_a_persons_write(admin_http: httpx.Client) -> None:
    name = f"ui-{uuid.uuid4().hex[:6]}"
    created = admin_http.post("/api/v1/namespaces/default/configmaps",
                              json={"metadata": {"name": name}, "data": {"a": "b"}})
    assert created.status_code == 201
    rv = created.json()["metadata"]["resourceVersion"]

    def chain() -> dict[str, Any] | None:
        answer = admin_http.get("/debug/traces/chain", params={"object": f"ConfigMap/default/{name}"}).json()
        return dict(answer) if answer["traceID"] else None

    view = eventually_sync(chain, timeout=15)
    assert view["object"] == f"ConfigMap/default/{name}" and view["traceID"]
    first = view["hops"][0]
    assert first["actor"] == "kube-apiserver" and first["resourceVersion"] == rv
    assert first["object"] == f"configmap/default/{name}" and first["action"] == f"create configmaps/{name}"
    assert first["reactedTo"] == {"request": "create configmaps", "by": "admin"}
    assert first["start"].endswith("Z") and len(first["start"].split(".")[1]) == 7  # microseconds
    assert first["durationMs"] > 0
    # The request's phases, each timed, nested under the hop.
    phases = [p["action"] for p in first["hops"]]
    for phase in ("authenticated", "authorize", "admission", "validation", "etcd create"):
        assert phase in phases, phases
    etcd = next(p for p in first["hops"] if p["action"] == "etcd create")
    assert str(etcd["attributes"]["etcd.revision"]) == rv and etcd["durationMs"] >= 0
    # Long-poll: nothing newer arrives for an unchanged store within the timeout.
    later = admin_http.get("/debug/traces/chain", params={"traceID": view["traceID"], "waitVersion": view["version"],
                                                         "timeoutSeconds": 0.2}).json()
    assert later["traceID"] == view["traceID"] and later["hops"][0]["spanId"] == first["spanId"]
    recent = admin_http.get("/debug/traces/recent").json()
    assert any(t["traceId"] == view["traceID"] and t["object"] == f"ConfigMap/default/{name}"
               for t in recent["traces"])
    assert "apiserver" in recent["services"]


def test_a_traced_write_records_when_each_watcher_was_sent_it(admin_http: httpx.Client) -> None:
    name = f"fan-{uuid.uuid4().hex[:6]}"
    got: list[str] = []
    watching = threading.Event()

    def watch() -> None:
        with admin_http.stream("GET", "/api/v1/namespaces/default/configmaps",
                               params={"watch": "true", "timeoutSeconds": 10}) as resp:
            watching.set()
            for line in resp.iter_lines():
                if name in line:
                    got.append(line)
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert watching.wait(10)
    created = admin_http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": name}})
    assert created.status_code == 201
    watcher.join(10)
    assert got, "the watch never saw the ConfigMap"

    def fanout() -> dict[str, Any] | None:
        view = admin_http.get("/debug/traces/chain", params={"object": f"ConfigMap/default/{name}"}).json()
        hops = view["hops"]
        found = [p for p in (hops[0]["hops"] if hops else []) if p["action"] == "watch fan-out"]
        return found[0] if found else None

    phase = eventually_sync(fanout, timeout=15)
    assert phase["attributes"]["watch.watchers"] >= 1
    assert phase["attributes"]["k8s.resource_version"] == created.json()["metadata"]["resourceVersion"]
    sent = [e for e in phase["events"] if e["name"] == "sent"]
    assert any(e["attributes"]["watcher"] == "admin" for e in sent)
    assert all(e["attributes"]["seconds"] >= 0 for e in sent)


def test_reading_the_chain_is_authorized(api: ApiServerHarness) -> None:
    token = api.token("scheduler")  # the scheduler's role exports spans but does not read them
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        assert client.get("/debug/traces/chain", params={"object": "ConfigMap/default/x"}).status_code == 403
