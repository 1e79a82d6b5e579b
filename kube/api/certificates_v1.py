"""certificates.k8s.io/v1 CertificateSigningRequest: a request for a certificate from a named signer.

A client (a joining kubelet, say) posts a PKCS#10 request (`spec.request`, PEM, base64 on
the wire as every `[]byte` field) naming a signer (`spec.signerName`) and the key usages it
wants; the API server records who asked (`username`, `uid`, `groups`, `extra`). Someone
with `approve` on the signer adds an `Approved` (or `Denied`) condition through the
`approval` subresource, and the signer writes the issued PEM into `status.certificate`
through `status`.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["APPROVED", "DENIED", "FAILED", "KUBE_APISERVER_CLIENT_SIGNER", "KUBELET_CLIENT_SIGNER",
           "KUBELET_SERVING_SIGNER", "CertificateSigningRequest", "CertificateSigningRequestCondition",
           "CertificateSigningRequestSpec", "CertificateSigningRequestStatus"]

_FOUND = resource_for_kind("certificates.k8s.io/v1", "CertificateSigningRequest")
assert _FOUND is not None
_CSR: ResourceInfo = _FOUND

KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
KUBELET_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving"

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"


class CertificateSigningRequestSpec(KubeModel):
    request: str = ""
    """The PEM request, base64-encoded as on the wire."""
    signer_name: str = ""
    expiration_seconds: int | None = None
    usages: list[str] | None = None
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


class CertificateSigningRequestCondition(KubeModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_update_time: str | None = None
    last_transition_time: str | None = None


class CertificateSigningRequestStatus(KubeModel):
    conditions: list[CertificateSigningRequestCondition] | None = None
    certificate: str | None = None
    """The issued PEM chain, base64-encoded as on the wire."""


class CertificateSigningRequest(KubeObject):
    info: ClassVar[ResourceInfo] = _CSR
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: CertificateSigningRequestSpec = Field(default_factory=CertificateSigningRequestSpec)
    status: CertificateSigningRequestStatus = Field(default_factory=CertificateSigningRequestStatus)
