"""Reading API errors the way controllers must: which refusals no retry can fix."""

from __future__ import annotations

from kube.errors import ApiError, Forbidden

__all__ = ["is_namespace_terminating"]


def is_namespace_terminating(err: ApiError) -> bool:
    """A create refused because its namespace is being deleted (upstream's NamespaceTerminating cause).

    Controllers drop such work: the namespace controller is removing everything in it.
    """
    if not isinstance(err, Forbidden):
        return False
    causes = (err.details or {}).get("causes") or []
    return any(c.get("type") == "NamespaceTerminating" for c in causes) or \
        "because it is being terminated" in err.message
