"""ServiceAccount: a pod that names no service account runs as `default`.

Mirrors plugin/pkg/admission/serviceaccount's defaulting half (token mounting arrives with
projected volumes).
"""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Obj
from apiserver.admission.plugins._pods import PodCreateMutation

__all__ = ["ServiceAccount"]


class ServiceAccount(PodCreateMutation):
    name = "ServiceAccount"

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
