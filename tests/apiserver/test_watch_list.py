"""Streaming lists (sendInitialEvents, what client-go's WatchListClient sends) over real HTTP:
the initial state as ADDED events, the initial-events-end bookmark, then live changes; and
the combinations upstream refuses."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

WATCH_LIST = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "allowWatchBookmarks": "true"}
END = "k8s.io/initial-events-end"


@pytest.fixture
def namespace(admin_http: httpx.Client) -> str:
    name = f"wl-{uuid.uuid4().hex[:6]}"
    resp = admin_http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": name}})
    assert resp.status_code == 201
    return name


def _create(http: httpx.Client, ns: str, name: str) -> dict[str, Any]:
    resp = http.post(f"/api/v1/namespaces/{ns}/configmaps",
                     json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def _events(resp: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in resp.iter_lines():
        if line.strip():
            yield dict(json.loads(line))


def _initial(events: Iterator[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """The names sent before the initial-events-end bookmark, and that bookmark."""
    names: list[str] = []
    for ev in events:
        if ev["type"] == "BOOKMARK" and (ev["object"]["metadata"].get("annotations") or {}).get(END) == "true":
            return names, ev
        assert ev["type"] == "ADDED", ev
        names.append(ev["object"]["metadata"]["name"])
    raise AssertionError("the stream ended before the initial-events-end bookmark")


@pytest.mark.parametrize("rv", [None, "0"])
def test_initial_state_then_bookmark_then_live_events(admin_http: httpx.Client, namespace: str,
                                                      rv: str | None) -> None:
    last = _create(admin_http, namespace, "a")
    last = _create(admin_http, namespace, "b")
    params = {**WATCH_LIST, "timeoutSeconds": "20", **({"resourceVersion": rv} if rv is not None else {})}
    with admin_http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as resp:
        assert resp.status_code == 200
        events = _events(resp)
        names, bookmark = _initial(events)
        assert sorted(names) == ["a", "b"]
        assert bookmark["object"]["kind"] == "ConfigMap" and bookmark["object"]["apiVersion"] == "v1"
        assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= int(last["metadata"]["resourceVersion"])
        _create(admin_http, namespace, "c")
        live = next(ev for ev in events if ev["type"] != "BOOKMARK")
        assert live["type"] == "ADDED" and live["object"]["metadata"]["name"] == "c"


def test_selectors_apply_to_the_initial_state(admin_http: httpx.Client, namespace: str) -> None:
    _create(admin_http, namespace, "a")
    _create(admin_http, namespace, "b")
    params = {**WATCH_LIST, "timeoutSeconds": "20", "fieldSelector": "metadata.name=b"}
    with admin_http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as resp:
        assert _initial(_events(resp))[0] == ["b"]


def test_without_bookmarks_no_end_marker(admin_http: httpx.Client, namespace: str) -> None:
    _create(admin_http, namespace, "a")
    params = {**WATCH_LIST, "allowWatchBookmarks": "false", "timeoutSeconds": "2"}
    with admin_http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as resp:
        events = list(_events(resp))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]


def test_send_initial_events_false_starts_at_now(admin_http: httpx.Client, namespace: str) -> None:
    _create(admin_http, namespace, "before")
    params = {**WATCH_LIST, "sendInitialEvents": "false", "timeoutSeconds": "20"}
    with admin_http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as resp:
        events = _events(resp)
        _create(admin_http, namespace, "after")
        first = next(ev for ev in events if ev["type"] != "BOOKMARK")
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "after"


def test_too_large_resource_version_is_an_error_event(admin_http: httpx.Client, namespace: str) -> None:
    params = {**WATCH_LIST, "resourceVersion": str(10**12), "timeoutSeconds": "20"}
    with admin_http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as resp:
        assert resp.status_code == 200
        events = list(_events(resp))
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["code"] == 504 and status["reason"] == "Timeout"
    assert status["message"].startswith(f"Timeout: Too large resource version: {10**12}, current: ")
    assert status["details"] == {"causes": [{"reason": "ResourceVersionTooLarge",
                                             "message": "Too large resource version"}], "retryAfterSeconds": 1}


@pytest.mark.parametrize("params, message", [
    ({"watch": "true", "resourceVersionMatch": "NotOlderThan"},
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
     "provided"),
    ({"sendInitialEvents": "true"}, "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
    ({"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "Exact"},
     '[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, '
     'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]'),
    ({"resourceVersionMatch": "NotOlderThan"},
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
])
def test_refused_combinations(admin_http: httpx.Client, params: dict[str, str], message: str) -> None:
    resp = admin_http.get("/api/v1/configmaps", params=params)
    assert resp.status_code == 422
    body = resp.json()
    assert body["reason"] == "Invalid" and body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'
    assert body["details"]["group"] == "meta.k8s.io" and body["details"]["kind"] == "ListOptions"


def test_malformed_send_initial_events_is_400(admin_http: httpx.Client) -> None:
    resp = admin_http.get("/api/v1/configmaps", params={**WATCH_LIST, "sendInitialEvents": "maybe"})
    assert resp.status_code == 400 and resp.json()["reason"] == "BadRequest"
