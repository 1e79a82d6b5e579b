"""What the pod admission plugins share: which writes are pod creates, and upstream's rejection."""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Obj
from kube.errors import Forbidden

__all__ = ["created_pod_spec", "forbidden"]


def created_pod_spec(attrs: Attributes) -> Obj | None:
    """The spec of the pod a create stores, or None for any other write (or a malformed spec)."""
    if not attrs.targets("", "pods") or attrs.object is None:
        return None
    spec = attrs.object.get("spec")
    return spec if isinstance(spec, dict) else None


def forbidden(name: str, message: str) -> Forbidden:
    return Forbidden(f'pods "{name}" is forbidden: {message}', details={"name": name, "kind": "pods"})
