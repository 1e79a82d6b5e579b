"""Which pod a command aimed at `POD`, `pod/NAME`, `deploy/NAME` or `rs/NAME` talks to.

`logs`, `exec` and `port-forward` all take a workload (Deployment, ReplicaSet,
ReplicationController, StatefulSet, DaemonSet, Job) as well as a pod, as kubectl does:
the workload's selector picks its pods and the oldest one is used (a note on stderr names
it when there are several). Any other kind is refused with a message naming it.
"""

from __future__ import annotations

import sys

from kube.api import Pod
from kube.client import RESTClient
from kubectl.context import CommandError, resolve, state

__all__ = ["pod_name"]

_WORKLOADS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job")


async def pod_name(client: RESTClient, ns: str, target: str, *, verb: str) -> str:
    """The name of the pod `target` means in `ns`; `verb` ("get the logs of") words the refusal."""
    kind, slash, name = target.partition("/")
    if not slash:
        return target
    info = resolve(await state.ctx.rest_mapper(client), kind)
    if info.kind == "Pod":
        return name
    if info.kind not in _WORKLOADS:
        raise CommandError(f"cannot {verb} a {info.kind}: choose a pod or a workload that runs pods")
    obj = await client.get_raw(info, name, ns)
    selector_field = (obj.get("spec") or {}).get("selector") or {}
    # A ReplicationController's selector is a plain label map; the others are LabelSelectors.
    labels = selector_field.get("matchLabels") or {} if info.kind != "ReplicationController" else selector_field
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    pods = (await client.list_raw(Pod.info, ns, label_selector=selector)).get("items") or []
    if not pods:
        raise CommandError(f"no pods found for {target}")
    pods.sort(key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]))
    if len(pods) > 1:
        print(f"Found {len(pods)} pods, using pod/{pods[0]['metadata']['name']}", file=sys.stderr)
    return str(pods[0]["metadata"]["name"])
