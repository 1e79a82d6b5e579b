"""Which kubelet client certificate requests csrapproving approves, and on what permission.

Mirrors pkg/controller/certificates/approver/sarapprove.go's recognizers: a request to
`kubernetes.io/kube-apiserver-client-kubelet` that is a kubelet client request
(`O=system:nodes, CN=system:node:<name>`, client usages, no SANs) is recognised as
- `selfnodeclient` when its requester is the node it names (a renewal), and
- `nodeclient` in any case (a first certificate, asked for with a bootstrap token);
it is approved when the requester may `create` `certificatesigningrequests/<that>` (a
SubjectAccessReview; kubeadm binds `nodeclient` to system:bootstrappers and
`selfnodeclient` to system:nodes). Pure; the controller does the I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.x509.oid import NameOID

from controllers.common.csr import kubelet_client_problem, parse_request
from kube.api import KUBELET_CLIENT_SIGNER, CertificateSigningRequest

__all__ = ["Recognition", "recognize"]


@dataclass(frozen=True)
class Recognition:
    """One permission that would approve the request, and the message its approval carries."""

    subresource: str
    message: str


def recognize(csr: CertificateSigningRequest) -> list[Recognition]:
    """The permissions, most specific first, any of which approves `csr`; [] when none applies."""
    if csr.spec.signer_name != KUBELET_CLIENT_SIGNER:
        return []
    req = parse_request(csr)
    if req is None or kubelet_client_problem(req, csr.spec.usages or []) is not None:
        return []
    found = []
    common_names = [str(a.value) for a in req.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if common_names and csr.spec.username == common_names[0]:
        found.append(Recognition("selfnodeclient", "Auto approving self kubelet client certificate after "
                                                   "SubjectAccessReview."))
    found.append(Recognition("nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview."))
    return found
