"""pods/binding and the bindings collection: the scheduler's one write, setting `spec.nodeName`
and PodScheduled.

Mirrors upstream's BindingREST and LegacyBindingREST: `POST pods/{name}/binding` and
`POST namespaces/{ns}/bindings` (the pod named by the Binding's metadata.name) share this
code. The name in the URL, when there is one, must be the Binding's (400 otherwise). A pod
is bound once: binding a pod that already has a node, that is being deleted, or whose UID
differs from the binding's is 409 Conflict with upstream's wording; a missing pod is 404. The
answer is `Status{status: Success, code: 201}`.

The write is one compare-and-swap on the pod's mod revision, computed from the watch cache's
copy (see cached_write.py): the hot path of a scheduler binding hundreds of pods a second is
one etcd transaction, with no read, no strategy and no field-manager bookkeeping, as
upstream's BindingREST writes through GuaranteedUpdate directly.
"""

from __future__ import annotations

from apiserver.registry.cached_write import write_from_cache
from apiserver.registry.generic import RegistryStore, now_rfc3339
from apiserver.registry.rest._status import success
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest, Conflict

__all__ = ["BindingStorage"]


def _conflict(name: str, why: str) -> Conflict:
    return Conflict(f'Operation cannot be fulfilled on pods/binding "{name}": {why}')


class BindingStorage:
    kind = Kind("", "v1", "Binding")

    def __init__(self, pods: RegistryStore) -> None:
        self.pods = pods

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        pod_name = str(meta.get("name") or "")
        if name is not None and name != pod_name:
            raise BadRequest("name in URL does not match name in Binding object")
        if not pod_name:
            raise BadRequest("metadata.name: Required value: name or generateName is required")
        target = obj.get("target") or {}
        node = target.get("name") if isinstance(target, dict) else None
        if not node:
            raise BadRequest("target.name: Required value")
        if isinstance(target, dict) and target.get("kind") not in (None, "", "Node"):
            raise BadRequest(f'target.kind: Unsupported value: "{target.get("kind")}": supported values: "Node", '
                             f'"<empty>"')
        uid = meta.get("uid")

        def assign(pod: Obj) -> Obj:
            meta, spec = pod["metadata"], pod["spec"]
            if uid and meta.get("uid") != uid:
                raise _conflict(pod_name, "the UID in the binding does not match the pod's")
            if meta.get("deletionTimestamp"):
                raise _conflict(pod_name, f"pod {pod_name} is being deleted, cannot be assigned to a host")
            if spec.get("nodeName"):
                raise _conflict(pod_name, f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"')
            spec["nodeName"] = node
            status = pod["status"]
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                               "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conditions
            return pod

        await write_from_cache(self.pods, ctx.namespace, pod_name, assign, subresource="binding",
                               dry_run=ctx.dry_run, admission=ctx.admission)
        return success()
