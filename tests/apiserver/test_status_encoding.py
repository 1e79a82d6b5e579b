"""Error answers are the bytes kube-apiserver writes: Status fields in Go's order, details before
code, empty detail fields left out, a trailing newline, Content-Type application/json."""

from __future__ import annotations

import json
import ssl
import uuid

import httpx

from kube.testing.apiserver import ApiServerHarness


def _status(message: str, reason: str, code: int, details: str | None) -> bytes:
    detail = f',"details":{details}' if details is not None else ""
    body = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":' + json.dumps(message)
            + f',"reason":"{reason}"' + detail + f',"code":{code}}}\n')
    return body.encode()


def _check(resp: httpx.Response, expected: bytes, code: int) -> None:
    assert resp.status_code == code
    assert resp.headers["content-type"] == "application/json"
    assert resp.content == expected


def test_not_found(admin_http: httpx.Client) -> None:
    _check(admin_http.get("/api/v1/namespaces/default/pods/nope"),
           _status('pods "nope" not found', "NotFound", 404, '{"name":"nope","kind":"pods"}'), 404)
    _check(admin_http.get("/apis/apps/v1/namespaces/default/deployments/nope"),
           _status('deployments.apps "nope" not found', "NotFound", 404,
                   '{"name":"nope","group":"apps","kind":"deployments"}'), 404)
    _check(admin_http.get("/api/v1/namespaces/default/nothings"),
           _status("the server could not find the requested resource", "NotFound", 404, "{}"), 404)


def test_already_exists(admin_http: httpx.Client) -> None:
    name = f"cm-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    assert admin_http.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
    _check(admin_http.post("/api/v1/namespaces/default/configmaps", json=body),
           _status(f'configmaps "{name}" already exists', "AlreadyExists", 409,
                   f'{{"name":"{name}","kind":"configmaps"}}'), 409)


def test_invalid_with_causes(admin_http: httpx.Client) -> None:
    resp = admin_http.get("/api/v1/pods", params={"watch": "true", "sendInitialEvents": "true"})
    message = ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires '
               "setting resourceVersionMatch to NotOlderThan")
    details = ('{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":'
               '"Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",'
               '"field":"resourceVersionMatch"}]}')
    _check(resp, _status(message, "Invalid", 422, details), 422)


def test_forbidden(api: ApiServerHarness) -> None:
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    with httpx.Client(base_url=api.server, verify=ctx, headers={"Authorization": f"Bearer {api.token('node-1')}"},
                      timeout=30) as node:
        resp = node.get("/api/v1/namespaces/default/secrets/x")
    message = resp.json()["message"]
    assert message.startswith('secrets "x" is forbidden: User "system:node:node-1" cannot get resource "secrets" in '
                              'API group "" in the namespace "default"')
    _check(resp, _status(message, "Forbidden", 403, '{"name":"x","kind":"secrets"}'), 403)


def test_unauthorized(api: ApiServerHarness) -> None:
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    with httpx.Client(base_url=api.server, verify=ctx, headers={"Authorization": "Bearer wrong"}, timeout=30) as c:
        _check(c.get("/api/v1/pods"), _status("Unauthorized", "Unauthorized", 401, None), 401)
