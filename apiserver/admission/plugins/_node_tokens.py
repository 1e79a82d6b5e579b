"""NodeRestriction's rule for the tokens a kubelet asks for: bound to a pod on its own node.

Mirrors admitServiceAccount in plugin/pkg/admission/noderestriction. A node may create a
ServiceAccount token (serviceaccounts/token) only with a `boundObjectRef` to a v1 Pod with a
name and a uid, and only for a pod that still has that uid and is bound to the node; so a
kubelet can mint credentials for the pods it runs and for no one else. Each refusal is 403
with upstream's message; a pod that does not exist is 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apiserver.admission.interfaces import Attributes, Obj, Operation
from kube.errors import ApiError, Forbidden

__all__ = ["GetPod", "check_node_token_request"]

GetPod = Callable[[str, str], Awaitable[Obj]]
"""Reads a pod from storage; raises NotFound when it does not exist."""


async def check_node_token_request(node: str, attrs: Attributes, get_pod: GetPod | None) -> None:
    """Raise unless this serviceaccounts/token create by `node` is bound to a pod of that node."""
    if attrs.operation is not Operation.CREATE or not attrs.targets("", "serviceaccounts", "token"):
        return
    prefix = f'serviceaccounts "{attrs.name}" is forbidden: '
    ref = ((attrs.object or {}).get("spec") or {}).get("boundObjectRef")
    if not isinstance(ref, dict) or ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
        raise Forbidden(prefix + "node requested token not bound to a pod")
    if not ref.get("uid"):
        raise Forbidden(prefix + "node requested token with a pod binding without a uid")
    if get_pod is None:
        return
    try:
        pod = await get_pod(attrs.namespace, str(ref["name"]))
    except ApiError as e:
        if e.code == 404:
            raise
        raise Forbidden(prefix + e.message) from e
    if (pod.get("metadata") or {}).get("uid") != ref["uid"]:
        raise Forbidden(prefix + f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
                                 "record. The object might have been deleted and then recreated")
    if (pod.get("spec") or {}).get("nodeName") != node:
        raise Forbidden(prefix + "node requested token bound to a pod scheduled on a different node")
