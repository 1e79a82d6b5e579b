"""What the certificate controllers read from a CertificateSigningRequest: its parsed PKCS#10
request, its decision, and whether it is the kind of request a kubernetes.io signer signs.

Mirrors pkg/apis/certificates/helpers.go (IsKubeletClientCSR, IsKubeletServingCSR) and the
kube-apiserver-client checks of pkg/controller/certificates/signer: a kubelet's request has
the subject `O=system:nodes, CN=system:node:<name>`, the usages of its signer (key
encipherment optional) and, for a client certificate, no SANs; a serving one names at least
one DNS name or IP and no email or URI. Pure functions; safe anywhere.
"""

from __future__ import annotations

import base64
import binascii

from cryptography import x509
from cryptography.x509.oid import NameOID

from kube.api import (
    KUBE_APISERVER_CLIENT_SIGNER,
    KUBELET_CLIENT_SIGNER,
    KUBELET_SERVING_SIGNER,
    CertificateSigningRequest,
)

__all__ = ["has_condition", "kubelet_client_problem", "parse_request", "signer_problem"]


def parse_request(csr: CertificateSigningRequest) -> x509.CertificateSigningRequest | None:
    """The request's PKCS#10, or None when it does not decode (the API server validated it)."""
    try:
        return x509.load_pem_x509_csr(base64.b64decode(csr.spec.request))
    except (binascii.Error, ValueError):
        return None


def has_condition(csr: CertificateSigningRequest, *types: str) -> bool:
    return any(c.type in types and c.status == "True" for c in csr.status.conditions or [])


def _subject(req: x509.CertificateSigningRequest) -> tuple[list[str], str]:
    orgs = [str(a.value) for a in req.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    names = req.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return orgs, str(names[0].value) if names else ""


def _sans(req: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _node_subject_problem(req: x509.CertificateSigningRequest) -> str | None:
    orgs, cn = _subject(req)
    if orgs != ["system:nodes"]:
        return "subject organization is not system:nodes"
    if not cn.startswith("system:node:"):
        return 'subject common name does not begin with "system:node:"'
    return None


def _usages_problem(usages: list[str], required: set[str], optional: set[str]) -> str | None:
    given = set(usages)
    if not required <= given or not given <= required | optional:
        return f"usages did not match {sorted(required | optional)}"
    return None


def kubelet_client_problem(req: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    """Why this is not a kubelet client certificate request (IsKubeletClientCSR), or None."""
    problem = _node_subject_problem(req)
    if problem:
        return problem
    sans = _sans(req)
    if sans is not None and len(list(sans)) > 0:
        return "DNS, email, IP or URI subjectAltNames are not allowed"
    return _usages_problem(usages, {"client auth", "digital signature"}, {"key encipherment"})


def _kubelet_serving_problem(req: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    problem = _node_subject_problem(req)
    if problem:
        return problem
    sans = _sans(req)
    if sans is None or not (sans.get_values_for_type(x509.DNSName) or sans.get_values_for_type(x509.IPAddress)):
        return "DNS or IP subjectAltName is required"
    if sans.get_values_for_type(x509.RFC822Name) or sans.get_values_for_type(x509.UniformResourceIdentifier):
        return "email and URI subjectAltNames are not allowed"
    return _usages_problem(usages, {"server auth", "digital signature"}, {"key encipherment"})


def _client_problem(req: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    if "client auth" not in usages:
        return "usages did not include client auth"
    allowed = {"client auth", "digital signature", "key encipherment"}
    if not set(usages) <= allowed:
        return f"usages did not match {sorted(allowed)}"
    return None


def signer_problem(signer_name: str, req: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    """Why the named kubernetes.io signer refuses to sign this request, or None."""
    if signer_name == KUBELET_CLIENT_SIGNER:
        return kubelet_client_problem(req, usages)
    if signer_name == KUBELET_SERVING_SIGNER:
        return _kubelet_serving_problem(req, usages)
    if signer_name == KUBE_APISERVER_CLIENT_SIGNER:
        return _client_problem(req, usages)
    return f"unknown signer {signer_name}"
