"""The browser view's routes: its files are public and hold no data; its data needs a token like the API."""

from __future__ import annotations

import ssl
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
        return dict(answer) if answer["traceId"] else None

    view = eventually_sync(chain, timeout=15)
    assert view["object"] == f"ConfigMap/default/{name}" and view["traceId"]
    first = view["hops"][0]
    assert first["actor"] == "apiserver" and first["resourceVersion"] == rv
    assert first["reactedTo"] == {"request": "create configmaps", "by": "admin"}
    # Long-poll: nothing newer arrives for an unchanged store within the timeout.
    later = admin_http.get("/debug/traces/chain", params={"traceID": view["traceId"], "waitVersion": view["version"],
                                                         "timeoutSeconds": 0.2}).json()
    assert later["traceId"] == view["traceId"] and later["hops"][0]["spanId"] == first["spanId"]
    recent = admin_http.get("/debug/traces/recent").json()
    assert any(t["traceId"] == view["traceId"] and t["object"] == f"ConfigMap/default/{name}"
               for t in recent["traces"])
    assert "apiserver" in recent["services"]


def test_reading_the_chain_is_authorized(api: ApiServerHarness) -> None:
    token = api.token("scheduler")  # the scheduler's role exports spans but does not read them
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        assert client.get("/debug/traces/chain", params={"object": "ConfigMap/default/x"}).status_code == 403
