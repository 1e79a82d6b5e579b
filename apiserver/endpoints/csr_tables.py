"""The table printer of CertificateSigningRequests (`kubectl get csr`).

Mirrors printCertificateSigningRequest of Kubernetes' pkg/printers/internalversion:
`NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION`, where REQUESTEDDURATION is
`spec.expirationSeconds` as a short duration (`<none>` when unset) and CONDITION lists the
types of the true Approved/Denied/Failed conditions, then `Issued` once a certificate is
there, or says `Pending`. Cells never raise.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import _AGE, _NAME, Column, Obj, Printer, _age, _name

__all__ = ["CSR_PRINTERS", "csr_condition", "short_human_duration"]


def short_human_duration(seconds: int) -> str:
    """apimachinery's duration.ShortHumanDuration."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 60:
        return f"{max(seconds, 0)}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    hours = seconds // 3600
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


def csr_condition(csr: Obj) -> str:
    status: Any = csr.get("status")
    status = status if isinstance(status, dict) else {}
    names = [str(c.get("type")) for c in status.get("conditions") or []
             if isinstance(c, dict) and c.get("type") in ("Approved", "Denied", "Failed")
             and c.get("status") in ("True", "", None)]
    if status.get("certificate"):
        names.append("Issued")
    return ",".join(names) or "Pending"


def _cells(csr: Obj, now: datetime) -> list[Any]:
    spec: Any = csr.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    seconds = spec.get("expirationSeconds")
    duration = short_human_duration(seconds) if isinstance(seconds, int) else "<none>"
    return [_name(csr), _age(csr, now), spec.get("signerName") or "", spec.get("username") or "", duration,
            csr_condition(csr)]


CSR_PRINTERS: dict[str, Printer] = {
    "CertificateSigningRequest": Printer(columns=(
        _NAME, _AGE,
        Column("SignerName", description="The signer the request is addressed to."),
        Column("Requestor", description="The user who created the request."),
        Column("RequestedDuration", description="The certificate lifetime the request asks for."),
        Column("Condition", description="Whether the request is approved, denied or failed, and issued.")),
        cells=_cells),
}
