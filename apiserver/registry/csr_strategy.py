"""The CertificateSigningRequest strategy: who may change what, through which path.

Mirrors pkg/registry/certificates/certificates/strategy.go:
- a new request starts with no status; the requester's identity is filled in by the store
  (`csr_store.py`), which knows the request's user;
- an update of the main resource changes metadata only (spec and status are kept);
- `/status` may change the certificate and conditions other than Approved and Denied (the
  signer's work); those two are kept as they were;
- `/approval` may change the conditions only (an approver's decision), never the certificate;
- each condition gets `lastUpdateTime`, and `lastTransitionTime` when its status changed.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.registry.csr_validation import validate_csr, validate_csr_update
from apiserver.registry.generic import now_rfc3339
from apiserver.registry.strategy import Obj, Strategy
from kube.errors import FieldError

__all__ = ["CertificateSigningRequestStrategy"]

_DECISIONS = ("Approved", "Denied")


def _conditions(obj: Obj) -> list[dict[str, Any]]:
    return [c for c in (obj.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def _stamp_conditions(new: Obj, old: Obj) -> None:
    before = {c.get("type"): c for c in _conditions(old)}
    now = now_rfc3339()
    for cond in _conditions(new):
        cond.setdefault("lastUpdateTime", now)
        prior = before.get(cond.get("type"))
        if prior is None or prior.get("status") != cond.get("status"):
            cond.setdefault("lastTransitionTime", now)
        elif not cond.get("lastTransitionTime") and prior.get("lastTransitionTime"):
            cond["lastTransitionTime"] = prior["lastTransitionTime"]


def _name_errors(obj: Obj) -> list[FieldError]:
    name = (obj.get("metadata") or {}).get("name")
    if not name:
        return [FieldError("metadata.name", "Required value: name or generateName is required",
                           reason="FieldValueRequired")]
    if name in (".", "..") or "/" in name or "%" in name:
        return [FieldError("metadata.name", f'Invalid value: "{name}": may not contain \'/\' or \'%\'')]
    return []


class CertificateSigningRequestStrategy(Strategy):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return _name_errors(obj) + validate_csr(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _name_errors(new) + validate_csr_update(new, old)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource not in ("status", "approval"):
            super().prepare_for_update(new, old, subresource=None)
            new["spec"] = copy.deepcopy(old.get("spec"))
            return
        status = copy.deepcopy(new.get("status") or {})
        super().prepare_for_update(new, old, subresource="status")
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        if subresource == "status":  # decisions are the approvers', kept as they were
            conditions = [c for c in conditions if c.get("type") not in _DECISIONS]
            conditions += [c for c in _conditions(old) if c.get("type") in _DECISIONS]
        else:  # the certificate is the signer's
            status = {k: v for k, v in (old.get("status") or {}).items() if k == "certificate"}
        status.pop("conditions", None)
        if conditions:
            status["conditions"] = conditions
        new["status"] = status
        _stamp_conditions(new, old)
