"""`pkctl rollout status|history|undo` for the kinds whose history is ControllerRevisions.

DaemonSets and StatefulSets keep each pod template they ran as a ControllerRevision they
control (the Deployment keeps ReplicaSets instead, see `rollout`). What kubectl does for them:

- status: kubectl's DaemonSetStatusViewer and StatefulSetStatusViewer, both only for the
  RollingUpdate strategy. A DaemonSet waits for the spec to be observed, then for every
  desired node to run an updated pod, then for those to be available; a StatefulSet waits
  for the spec to be observed, for every replica to be ready, then for the pods above the
  partition to be updated (or, without a rollingUpdate block, for the current revision to
  reach the update revision);
- history: the revisions the object controls, by revision number, with their
  `kubernetes.io/change-cause`; `--revision N` shows that revision's pod template;
- undo: the chosen revision's data (a strategic merge patch replacing the template) applied
  to the object; its controller then renumbers that revision as the newest.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kube.client import RESTClient, RESTMapper
from kube.resources import ResourceInfo
from kubectl.context import CommandError, resolve

__all__ = ["REVISIONED_KINDS", "revision_history", "revision_status_message", "revision_template",
           "revision_undo", "revisions"]

CHANGE_CAUSE = "kubernetes.io/change-cause"
REVISIONED_KINDS = frozenset({"DaemonSet", "StatefulSet"})


def _only_rolling_update(obj: dict[str, Any]) -> None:
    strategy = ((obj.get("spec") or {}).get("updateStrategy") or {}).get("type")
    if strategy != "RollingUpdate":
        raise CommandError("rollout status is only available for RollingUpdate strategy type")


def _spec_unobserved(obj: dict[str, Any]) -> bool:
    observed = int((obj.get("status") or {}).get("observedGeneration") or 0)
    return observed == 0 or int(obj["metadata"].get("generation") or 0) > observed


def daemonset_status_message(ds: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's rollout status line for DaemonSet `ds`, and whether it is done."""
    _only_rolling_update(ds)
    name = ds["metadata"]["name"]
    if _spec_unobserved(ds):
        return "Waiting for daemon set spec update to be observed...", False
    st = ds.get("status") or {}
    desired, updated, available = (int(st.get(k) or 0) for k in ("desiredNumberScheduled",
                                                                   "updatedNumberScheduled", "numberAvailable"))
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return f"{prefix}{updated} out of {desired} new pods have been updated...", False
    if available < desired:
        return f"{prefix}{available} of {desired} updated pods are available...", False
    return f'daemon set "{name}" successfully rolled out', True


def statefulset_status_message(sts: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's rollout status line for StatefulSet `sts`, and whether it is done."""
    _only_rolling_update(sts)
    if _spec_unobserved(sts):
        return "Waiting for statefulset spec update to be observed...", False
    spec, st = sts.get("spec") or {}, sts.get("status") or {}
    replicas = int(spec.get("replicas", 1))
    ready, updated = int(st.get("readyReplicas") or 0), int(st.get("updatedReplicas") or 0)
    if ready < replicas:
        return f"Waiting for {replicas - ready} pods to be ready...", False
    rolling = (spec.get("updateStrategy") or {}).get("rollingUpdate")
    if rolling is not None:
        above_partition = replicas - int(rolling.get("partition") or 0)
        if updated < above_partition:
            return (f"Waiting for partitioned roll out to finish: {updated} out of {above_partition} "
                    "new pods have been updated..."), False
        return f"partitioned roll out complete: {updated} new pods have been updated...", True
    if st.get("updateRevision") != st.get("currentRevision"):
        return (f"waiting for statefulset rolling update to complete {updated} pods at revision "
                f"{st.get('updateRevision')}..."), False
    return (f"statefulset rolling update complete {int(st.get('currentReplicas') or 0)} pods at revision "
            f"{st.get('currentRevision')}..."), True


def revision_status_message(kind: str, obj: dict[str, Any]) -> tuple[str, bool]:
    """The rollout status line of a DaemonSet or StatefulSet (`kind`), and whether it is done."""
    return (daemonset_status_message if kind == "DaemonSet" else statefulset_status_message)(obj)


async def revisions(client: RESTClient, mapper: RESTMapper, obj: dict[str, Any],
                    ns: str) -> list[tuple[int, dict[str, Any]]]:
    """(revision, ControllerRevision) controlled by `obj`, oldest first."""
    info = resolve(mapper, "controllerrevisions.apps")
    uid = obj["metadata"].get("uid")
    found = [(int(cr.get("revision") or 0), cr) for cr in (await client.list_raw(info, ns)).get("items") or []
             if any(o.get("uid") == uid and o.get("controller")
                    for o in (cr.get("metadata") or {}).get("ownerReferences") or [])]
    return sorted(found, key=lambda p: p[0])


def revision_template(cr: dict[str, Any]) -> dict[str, Any]:
    """The pod template a revision restores (its patch, without the `$patch` directive)."""
    template = copy.deepcopy(((cr.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return dict(template)


async def revision_history(client: RESTClient, mapper: RESTMapper, info: ResourceInfo, obj: dict[str, Any],
                           ns: str, *, revision: int) -> str:
    """`rollout history` output: the revision table, or one revision's pod template."""
    ref = f"{info.kind.lower()}.{info.group}/{obj['metadata']['name']}"
    found_revisions = await revisions(client, mapper, obj, ns)
    if revision:
        found = next((cr for rev, cr in found_revisions if rev == revision), None)
        if found is None:
            raise CommandError(f"unable to find the specified revision {revision}")
        body = yaml.safe_dump({"Pod Template": revision_template(found)}, sort_keys=False, default_flow_style=False)
        return f"{ref} with revision #{revision}\n{body}"
    rows = [("REVISION", "CHANGE-CAUSE")] + [
        (str(rev), ((cr.get("metadata") or {}).get("annotations") or {}).get(CHANGE_CAUSE) or "<none>")
        for rev, cr in found_revisions]
    width = max(len(r[0]) for r in rows)
    return f"{ref} \n" + "".join(f"{a.ljust(width)}  {b}\n" for a, b in rows) + "\n"


async def revision_undo(client: RESTClient, mapper: RESTMapper, info: ResourceInfo, obj: dict[str, Any], ns: str, *,
                        to_revision: int) -> str:
    """Apply the chosen revision's patch (default: the one before the newest); the output line."""
    name = obj["metadata"]["name"]
    ref = f"{info.kind.lower()}.{info.group}/{name}"
    found_revisions = await revisions(client, mapper, obj, ns)
    if to_revision:
        target = next((cr for rev, cr in found_revisions if rev == to_revision), None)
        if target is None:
            raise CommandError(f"unable to find specified revision {to_revision} in history")
        wanted = to_revision
    else:
        if len(found_revisions) < 2:
            raise CommandError("no last revision to roll back to")
        wanted, target = found_revisions[-2]
    if revision_template(target) == (obj.get("spec") or {}).get("template"):
        return f"{ref} skipped rollback (current template already matches revision {wanted})\n"
    await client.patch_raw(info, name, target.get("data") or {}, ns, patch_type="strategic")
    return f"{ref} rolled back\n"
