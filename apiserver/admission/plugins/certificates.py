"""CertificateApproval, CertificateSigning and CertificateSubjectRestriction: who may decide and
sign a CertificateSigningRequest, and what no one may ask for.

Mirrors plugin/pkg/admission/certificates/{approval,signing,subjectrestriction}:
- an update through `certificatesigningrequests/approval` needs `approve` on the signer
  (resource `signers` in `certificates.k8s.io`, named after `spec.signerName` or its
  `<domain>/*` wildcard), whatever it changes;
- an update through `/status` that changes `status.certificate` needs `sign` on the signer;
- a request to `kubernetes.io/kube-apiserver-client` for a subject in `system:masters` is
  refused outright: that group may do anything and is never handed out by a CSR.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import NameOID

from apiserver.admission.interfaces import Attributes, Obj, Operation
from apiserver.authn import UserInfo
from apiserver.authz import Attributes as AuthzAttributes
from apiserver.authz import Authorizer, Decision
from apiserver.registry.csr_validation import decode_bytes
from kube.errors import Forbidden

__all__ = ["CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction", "authorized_for_signer"]

_GROUP = "certificates.k8s.io"


def authorized_for_signer(authorizer: Authorizer, user: UserInfo, verb: str, signer_name: str) -> bool:
    """True when `user` may `verb` the signer by its name or by its domain's wildcard."""
    names = [signer_name]
    domain, slash, _ = signer_name.partition("/")
    if slash:
        names.append(f"{domain}/*")
    for name in names:
        decision, _ = authorizer.authorize(AuthzAttributes(user=user, verb=verb, api_group=_GROUP, api_version="*",
                                                           resource="signers", name=name))
        if decision is Decision.ALLOW:
            return True
    return False


def _signer(obj: Obj | None) -> str:
    return str(((obj or {}).get("spec") or {}).get("signerName") or "")


def _targets_csr(attrs: Attributes, subresource: str) -> bool:
    return attrs.targets(_GROUP, "certificatesigningrequests", subresource)


class CertificateApproval:
    name = "CertificateApproval"

    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.UPDATE

    async def validate(self, attrs: Attributes) -> None:
        if not _targets_csr(attrs, "approval"):
            return
        signer = _signer(attrs.old_object) or _signer(attrs.object)
        if not authorized_for_signer(self.authorizer, attrs.user, "approve", signer):
            raise Forbidden(f'{attrs.resource.qualified} "{attrs.name}" is forbidden: user not permitted to approve '
                            f'requests with signerName "{signer}"')


class CertificateSigning:
    name = "CertificateSigning"

    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.UPDATE

    async def validate(self, attrs: Attributes) -> None:
        if not _targets_csr(attrs, "status"):
            return
        before = ((attrs.old_object or {}).get("status") or {}).get("certificate")
        after = ((attrs.object or {}).get("status") or {}).get("certificate")
        if before == after:
            return
        signer = _signer(attrs.old_object) or _signer(attrs.object)
        if not authorized_for_signer(self.authorizer, attrs.user, "sign", signer):
            raise Forbidden(f'{attrs.resource.qualified} "{attrs.name}" is forbidden: user not permitted to sign '
                            f'requests with signerName "{signer}"')


class CertificateSubjectRestriction:
    name = "CertificateSubjectRestriction"

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def validate(self, attrs: Attributes) -> None:
        if not _targets_csr(attrs, "") or _signer(attrs.object) != "kubernetes.io/kube-apiserver-client":
            return
        if "system:masters" in _organizations(attrs.object):
            raise Forbidden(f'{attrs.resource.qualified} "{attrs.name}" is forbidden: use of '
                            "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")


def _organizations(obj: Obj | None) -> list[str]:
    """The subject's O values of the request's PEM (none when it does not parse: validation says why)."""
    data = decode_bytes(((obj or {}).get("spec") or {}).get("request"))
    if not data:
        return []
    try:
        csr = x509.load_pem_x509_csr(data)
    except ValueError:
        return []
    return [str(a.value) for a in csr.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
