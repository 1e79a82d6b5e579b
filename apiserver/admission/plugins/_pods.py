"""What the pod admission plugins share: which writes are pod creates, and upstream's rejection."""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Obj, Operation
from kube.errors import Forbidden

__all__ = ["PodCreateMutation", "created_pod_spec", "forbidden"]


def created_pod_spec(attrs: Attributes) -> Obj | None:
    """The spec of the pod a create stores, or None for any other write (or a malformed spec)."""
    if not attrs.targets("", "pods") or attrs.object is None:
        return None
    spec = attrs.object.get("spec")
    return spec if isinstance(spec, dict) else None


class PodCreateMutation:
    """A mutating plugin that acts on pod creates only: `admit_pod` gets the pod's spec."""

    name = ""

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def admit(self, attrs: Attributes) -> None:
        spec = created_pod_spec(attrs)
        if spec is not None:
            await self.admit_pod(attrs, spec)

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        raise NotImplementedError


def forbidden(name: str, message: str) -> Forbidden:
    return Forbidden(f'pods "{name}" is forbidden: {message}', details={"name": name, "kind": "pods"})
