"""A node's client certificate: obtained through a CSR, kept in a kubeconfig, renewed in time.

Mirrors the kubelet's TLS bootstrap (pkg/kubelet/certificate/bootstrap) and certificate
manager (client-go util/certificate): a fresh ECDSA key, a request for
`CN=system:node:<name>, O=system:nodes` to `kubernetes.io/kube-apiserver-client-kubelet`
with the usages `digital signature` and `client auth`, created with whatever credential is
at hand (the bootstrap token first, the current certificate later), then waited on until
`status.certificate` is set; a Denied or Failed request is an error. `rotation_deadline`
picks when to renew: a random point between 70% and 90% of the certificate's life, as the
kubelet's certificate manager does.
"""

from __future__ import annotations

import base64
import datetime as dt
import random
import time
from pathlib import Path

import httpx
from cryptography import x509

from kube.client.config import ClientConfig
from kube.csr import certificate_request, new_key
from picokube._files import write_file_atomic
from picokube.kubeconfig import CONTEXT_NAME

__all__ = ["CertificateError", "request_node_certificate", "rotation_deadline", "write_node_kubeconfig"]

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


class CertificateError(Exception):
    """The certificate could not be obtained; the message says why."""


def rotation_deadline(cert_pem: bytes, *, rng: random.Random | None = None) -> dt.datetime:
    """When to renew: notBefore + a random 70-90% of the certificate's lifetime."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    fraction = 0.7 + 0.2 * (rng or random.Random()).random()
    return start + (end - start) * fraction


def request_node_certificate(config: ClientConfig, node: str, *, timeout: float = 120.0,
                             expiration_seconds: int | None = None) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) for `system:node:<node>`, asked for with `config`'s credential."""
    key = new_key()
    request = certificate_request(key, common_name=f"system:node:{node}", organizations=("system:nodes",))
    spec: dict[str, object] = {"request": base64.b64encode(request).decode(),
                               "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
                               "usages": ["digital signature", "client auth"]}
    if expiration_seconds is not None:
        spec["expirationSeconds"] = expiration_seconds
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"generateName": "csr-"}, "spec": spec}
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    with httpx.Client(base_url=config.server, verify=config.ssl_context(), headers=headers, timeout=30) as client:
        resp = client.post(CSRS, json=body)
        _refuse_unauthorized(resp)
        if resp.status_code != 201:
            raise CertificateError(f"creating the certificate signing request: {resp.status_code} "
                                   f"{_message(resp)}")
        name = resp.json()["metadata"]["name"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            resp = client.get(f"{CSRS}/{name}")
            _refuse_unauthorized(resp)  # a token may expire while its request waits for approval
            if resp.status_code != 200:
                if resp.status_code in (429, 500, 502, 503, 504):
                    time.sleep(0.5)
                    continue
                raise CertificateError(f"reading certificate signing request {name}: {resp.status_code} "
                                       f"{_message(resp)}")
            status = resp.json().get("status") or {}
            for cond in status.get("conditions") or []:
                if cond.get("type") in ("Denied", "Failed") and cond.get("status") == "True":
                    raise CertificateError(f"certificate signing request {name} was {cond['type'].lower()}: "
                                           f"{cond.get('message') or cond.get('reason') or ''}")
            if status.get("certificate"):
                return base64.b64decode(status["certificate"]), key
            time.sleep(0.5)
    raise CertificateError(f"certificate signing request {name} was not issued within {timeout:.0f}s "
                           f"(approve it with `kubectl certificate approve {name}`)")


def _refuse_unauthorized(resp: httpx.Response) -> None:
    if resp.status_code == 401:
        raise CertificateError("the API server refused the credential (401 Unauthorized): the bootstrap token "
                               "is unknown or has expired")


def _message(resp: httpx.Response) -> str:
    try:
        return str(resp.json().get("message") or resp.text[:300])
    except ValueError:
        return resp.text[:300]


def write_node_kubeconfig(path: Path, *, server: str, ca_pem: bytes, node: str, cert_pem: bytes,
                          key_pem: bytes) -> None:
    """A kubeconfig authenticating as the node with its client certificate (mode 0600)."""
    import yaml

    user = f"system:node:{node}"
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": CONTEXT_NAME, "cluster": {
               "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
           "users": [{"name": user, "user": {"client-certificate-data": base64.b64encode(cert_pem).decode(),
                                             "client-key-data": base64.b64encode(key_pem).decode()}}],
           "contexts": [{"name": CONTEXT_NAME, "context": {"cluster": CONTEXT_NAME, "user": user}}],
           "current-context": CONTEXT_NAME, "preferences": {}}
    write_file_atomic(path, yaml.safe_dump(doc, sort_keys=False).encode(), mode=0o600)
