"""certificates.k8s.io/v1 CertificateSigningRequests against a real API server: validation,
the requester recorded from the request, approval needing `approve` on the signer, signing
needing `sign`, the table columns, and SubjectAccessReview (which csrapproving asks)."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import httpx

from kube.csr import certificate_request, new_key
from tests.apiserver.conftest import causes

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"


def _request_b64(cn: str = "system:node:node-1", orgs: tuple[str, ...] = ("system:nodes",)) -> str:
    return base64.b64encode(certificate_request(new_key(), common_name=cn, organizations=orgs)).decode()


def _csr(name: str, **spec: Any) -> dict[str, Any]:
    body = {"request": _request_b64(), "signerName": SIGNER, "usages": ["digital signature", "client auth"]}
    body.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name}, "spec": body}


def _name() -> str:
    return f"csr-{uuid.uuid4().hex[:8]}"


def _as(user: str, *groups: str) -> dict[str, str]:
    headers = {"Impersonate-User": user}
    return headers | {"Impersonate-Group": ",".join(groups)} if groups else headers


def _approve(c: httpx.Client, name: str, headers: dict[str, str] | None = None) -> httpx.Response:
    csr = c.get(f"{CSRS}/{name}").json()
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]}
    return c.put(f"{CSRS}/{name}/approval", json=csr, headers=headers or {})


def test_create_records_the_requester_and_starts_pending(c: httpx.Client) -> None:
    name = _name()
    body = _csr(name, username="someone-else", groups=["system:masters"])
    resp = c.post(CSRS, json=body, headers=_as("system:node:node-1", "system:nodes"))
    assert resp.status_code == 201, resp.text
    spec = resp.json()["spec"]
    assert spec["username"] == "system:node:node-1"
    assert "system:masters" not in spec["groups"] and "system:nodes" in spec["groups"]
    assert resp.json().get("status", {}) == {}


def test_validation_lists_every_error(c: httpx.Client) -> None:
    bad = _csr(_name(), request=base64.b64encode(b"not a pem").decode(), signerName="nodomain", usages=["bogus"],
               expirationSeconds=599)
    errors = causes(c.post(CSRS, json=bad))
    assert "PEM block type must be CERTIFICATE REQUEST" in errors["spec.request"]
    assert "example.com/signer-name" in errors["spec.signerName"]
    assert errors["spec.usages[0]"].startswith('Unsupported value: "bogus"')
    assert "less than 600 seconds" in errors["spec.expirationSeconds"]
    missing = causes(c.post(CSRS, json={"metadata": {"name": _name()}, "spec": {}}))
    assert {"spec.request", "spec.signerName", "spec.usages"} <= set(missing)


def test_approval_needs_approve_on_the_signer(c: httpx.Client) -> None:
    name = _name()
    assert c.post(CSRS, json=_csr(name)).status_code == 201
    role = f"csr-approval-only-{uuid.uuid4().hex[:6]}"
    c.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json={"metadata": {"name": role}, "rules": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests",
                                                             "certificatesigningrequests/approval"],
         "verbs": ["get", "update"]}]}).raise_for_status()
    c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
        "metadata": {"name": role}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                "name": role},
        "subjects": [{"kind": "User", "name": "approver", "apiGroup": "rbac.authorization.k8s.io"}]}
    ).raise_for_status()
    refused = _approve(c, name, _as("approver"))
    assert refused.status_code == 403, refused.text
    assert f'user not permitted to approve requests with signerName "{SIGNER}"' in refused.json()["message"]

    c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
        "metadata": {"name": f"{role}-signer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver"},
        "subjects": [{"kind": "User", "name": "approver", "apiGroup": "rbac.authorization.k8s.io"}]}
    ).raise_for_status()
    approved = _approve(c, name, _as("approver"))
    assert approved.status_code == 200, approved.text
    cond = approved.json()["status"]["conditions"][0]
    assert cond["type"] == "Approved" and cond["lastUpdateTime"] and cond["lastTransitionTime"]


def test_status_keeps_decisions_and_approval_keeps_the_certificate(c: httpx.Client) -> None:
    name = _name()
    assert c.post(CSRS, json=_csr(name)).status_code == 201
    csr = c.get(f"{CSRS}/{name}").json()
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    # Through /status the decision is not taken: it stays Pending.
    assert c.put(f"{CSRS}/{name}/status", json=csr).json().get("status", {}).get("conditions") is None
    assert _approve(c, name).status_code == 200
    both = c.get(f"{CSRS}/{name}").json()
    both["status"]["conditions"].append({"type": "Denied", "status": "True"})
    assert "mutually exclusive" in c.put(f"{CSRS}/{name}/approval", json=both).text


def test_certificate_only_on_approved_requests(c: httpx.Client) -> None:
    name = _name()
    assert c.post(CSRS, json=_csr(name)).status_code == 201
    csr = c.get(f"{CSRS}/{name}").json()
    csr["status"] = {"certificate": base64.b64encode(b"junk").decode()}
    resp = c.put(f"{CSRS}/{name}/status", json=csr)
    assert resp.status_code == 422 and "status.certificate" in causes(resp)


def test_table_columns_and_condition(c: httpx.Client) -> None:
    name = _name()
    assert c.post(CSRS, json=_csr(name, expirationSeconds=3600)).status_code == 201
    assert _approve(c, name).status_code == 200
    table = c.get(f"{CSRS}/{name}", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    columns = [col["name"] for col in table["columnDefinitions"]]
    assert columns == ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    cells = table["rows"][0]["cells"]
    assert cells[2:] == [SIGNER, "admin", "1h", "Approved"]


def test_discovery_lists_csrs_with_their_subresources(c: httpx.Client) -> None:
    resources = {r["name"]: r for r in c.get("/apis/certificates.k8s.io/v1").json()["resources"]}
    assert resources["certificatesigningrequests"]["shortNames"] == ["csr"]
    assert {"certificatesigningrequests/approval", "certificatesigningrequests/status"} <= set(resources)


def test_subject_access_review_answers_for_the_named_user(c: httpx.Client) -> None:
    review: dict[str, Any] = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
        "user": "system:node:node-1", "groups": ["system:nodes"],
        "resourceAttributes": {"group": "certificates.k8s.io", "resource": "certificatesigningrequests",
                               "verb": "create"}}}
    resp = c.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review)
    assert resp.status_code == 201, resp.text
    assert resp.json()["status"]["allowed"] is True
    del review["spec"]["user"], review["spec"]["groups"]
    assert c.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review).status_code == 422
