"""The certificate controllers' pure rules: which kubelet requests csrapproving recognises (and
as which permission), what each kubernetes.io signer refuses, and the signing lifetime."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from controllers.common.csr import signer_problem
from controllers.csrapproving.approver import recognize
from controllers.csrsigning.signer import signing_duration
from kube.api import CertificateSigningRequest
from kube.csr import certificate_request, new_key

KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
CLIENT_USAGES = ["digital signature", "client auth"]


def _csr(*, cn: str = "system:node:n1", orgs: tuple[str, ...] = ("system:nodes",), username: str = "system:bootstrap:a",
         signer: str = KUBELET, usages: list[str] | None = None) -> CertificateSigningRequest:
    pem = certificate_request(new_key(), common_name=cn, organizations=orgs)
    return CertificateSigningRequest.model_validate({"metadata": {"name": "c"}, "spec": {
        "request": base64.b64encode(pem).decode(), "signerName": signer, "usages": usages or CLIENT_USAGES,
        "username": username}})


@pytest.mark.parametrize(("csr", "expected"), [
    (_csr(), ["nodeclient"]),
    (_csr(username="system:node:n1"), ["selfnodeclient", "nodeclient"]),
    (_csr(usages=[*CLIENT_USAGES, "key encipherment"]), ["nodeclient"]),
    (_csr(orgs=("system:masters",)), []),
    (_csr(orgs=("system:nodes", "extra")), []),
    (_csr(cn="admin"), []),
    (_csr(usages=["digital signature", "server auth"]), []),
    (_csr(signer="kubernetes.io/kube-apiserver-client"), []),
])
def test_recognized_requests(csr: CertificateSigningRequest, expected: list[str]) -> None:
    assert [r.subresource for r in recognize(csr)] == expected


def _serving_request(*sans: x509.GeneralName) -> x509.CertificateSigningRequest:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"),
        x509.NameAttribute(NameOID.COMMON_NAME, "system:node:n1")]))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(key, hashes.SHA256())


def test_signers_refuse_what_is_not_theirs() -> None:
    kubelet = x509.load_pem_x509_csr(certificate_request(new_key(), common_name="system:node:n1",
                                                         organizations=("system:nodes",)))
    assert signer_problem(KUBELET, kubelet, CLIENT_USAGES) is None
    assert signer_problem(KUBELET, kubelet, ["server auth", "digital signature"]) is not None
    serving_usages = ["digital signature", "server auth"]
    assert "required" in (signer_problem("kubernetes.io/kubelet-serving", _serving_request(), serving_usages) or "")
    assert signer_problem("kubernetes.io/kubelet-serving", _serving_request(x509.DNSName("n1")), serving_usages) \
        is None
    assert signer_problem("kubernetes.io/kube-apiserver-client", kubelet, ["server auth"]) is not None
    assert signer_problem("example.com/other", kubelet, CLIENT_USAGES) is not None


def test_signing_duration_honours_shorter_expiration_seconds() -> None:
    year = dt.timedelta(hours=8760)
    assert signing_duration(year, None) == year
    assert signing_duration(year, 600) == dt.timedelta(seconds=600)
    assert signing_duration(dt.timedelta(hours=1), 7200) == dt.timedelta(hours=1)
