"""Building a ReplicaSet's pods, and judging what a failed create may have left behind.

Mirrors controller.GetPodFromTemplate / RealPodControl.CreatePods: a pod is the template's
spec with the template's labels, annotations and finalizers, `generateName: <rs-name>-`, in
the ReplicaSet's namespace, controlled by the ReplicaSet.
"""

from __future__ import annotations

import httpx

from controllers.common.owner import new_controller_ref
from controllers.replicaset.kinds import Managed
from kube.api import ObjectMeta, Pod

__all__ = ["may_have_been_created", "pod_from_template"]

# Transport failures that happen before the request leaves this process.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol,
             httpx.LocalProtocolError)


def pod_from_template(rs: Managed) -> Pod:
    """The pod to create for `rs` (a new object; the template is not shared)."""
    template = rs.spec.template.model_copy(deep=True)
    meta = ObjectMeta(
        generate_name=f"{rs.metadata.name}-",
        namespace=rs.metadata.namespace,
        labels=template.metadata.labels,
        annotations=template.metadata.annotations,
        finalizers=template.metadata.finalizers,
        owner_references=[new_controller_ref(rs)],
    )
    return Pod(metadata=meta, spec=template.spec)


def may_have_been_created(error: Exception) -> bool:
    """True when the request may have reached the API server even though it failed here.

    An API error is the server's answer: nothing was created. A transport failure after
    the request was sent (read timeout, connection dropped) leaves the outcome unknown.
    """
    return isinstance(error, httpx.TransportError) and not isinstance(error, _NOT_SENT)
