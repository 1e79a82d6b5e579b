"""ServiceAccount: a pod that names no service account runs as `default`.

Mirrors plugin/pkg/admission/serviceaccount's defaulting half (token mounting arrives with
projected volumes).
"""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Operation
from apiserver.admission.plugins._pods import created_pod_spec

__all__ = ["ServiceAccount"]


class ServiceAccount:
    name = "ServiceAccount"

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def admit(self, attrs: Attributes) -> None:
        spec = created_pod_spec(attrs)
        if spec is None:
            return
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
