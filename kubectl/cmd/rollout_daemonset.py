"""`pkctl rollout status|history|undo daemonset/NAME`: what kubectl's DaemonSet rollout code does.

- status: kubectl's DaemonSetStatusViewer: only for the RollingUpdate strategy; waits for the
  spec to be observed, then for every desired node to run an updated pod, then for those to
  be available;
- history: the DaemonSet's ControllerRevisions (those it controls), by revision number, with
  their `kubernetes.io/change-cause`; `--revision N` shows that revision's pod template;
- undo: the chosen revision's data (a strategic merge patch replacing the template) applied
  to the DaemonSet; the controller then renumbers that revision as the newest.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kube.client import RESTClient, RESTMapper
from kube.resources import ResourceInfo
from kubectl.context import CommandError, resolve

__all__ = ["daemonset_history", "daemonset_revisions", "daemonset_status_message", "daemonset_undo",
           "revision_template"]

CHANGE_CAUSE = "kubernetes.io/change-cause"


def daemonset_status_message(ds: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's rollout status line for DaemonSet `ds`, and whether it is done."""
    name = ds["metadata"]["name"]
    strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type")
    if strategy != "RollingUpdate":
        raise CommandError("rollout status is only available for RollingUpdate strategy type")
    st = ds.get("status") or {}
    if int(ds["metadata"].get("generation") or 0) > int(st.get("observedGeneration") or 0):
        return "Waiting for daemon set spec update to be observed...", False
    desired, updated, available = (int(st.get(k) or 0) for k in ("desiredNumberScheduled",
                                                                   "updatedNumberScheduled", "numberAvailable"))
    prefix = f'Waiting for daemon set "{name}" rollout to finish: '
    if updated < desired:
        return f"{prefix}{updated} out of {desired} new pods have been updated...", False
    if available < desired:
        return f"{prefix}{available} of {desired} updated pods are available...", False
    return f'daemon set "{name}" successfully rolled out', True


async def daemonset_revisions(client: RESTClient, mapper: RESTMapper, ds: dict[str, Any],
                              ns: str) -> list[tuple[int, dict[str, Any]]]:
    """(revision, ControllerRevision) controlled by DaemonSet `ds`, oldest first."""
    info = resolve(mapper, "controllerrevisions.apps")
    uid = ds["metadata"].get("uid")
    found = [(int(cr.get("revision") or 0), cr) for cr in (await client.list_raw(info, ns)).get("items") or []
             if any(o.get("uid") == uid and o.get("controller")
                    for o in (cr.get("metadata") or {}).get("ownerReferences") or [])]
    return sorted(found, key=lambda p: p[0])


def revision_template(cr: dict[str, Any]) -> dict[str, Any]:
    """The pod template a revision restores (its patch, without the `$patch` directive)."""
    template = copy.deepcopy(((cr.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return dict(template)


async def daemonset_history(client: RESTClient, mapper: RESTMapper, ds: dict[str, Any], ns: str, *,
                            revision: int) -> str:
    """`rollout history` output: the revision table, or one revision's pod template."""
    name = ds["metadata"]["name"]
    revisions = await daemonset_revisions(client, mapper, ds, ns)
    if revision:
        found = next((cr for rev, cr in revisions if rev == revision), None)
        if found is None:
            raise CommandError(f"unable to find the specified revision {revision}")
        body = yaml.safe_dump({"Pod Template": revision_template(found)}, sort_keys=False, default_flow_style=False)
        return f"daemonset.apps/{name} with revision #{revision}\n{body}"
    rows = [("REVISION", "CHANGE-CAUSE")] + [
        (str(rev), ((cr.get("metadata") or {}).get("annotations") or {}).get(CHANGE_CAUSE) or "<none>")
        for rev, cr in revisions]
    width = max(len(r[0]) for r in rows)
    return f"daemonset.apps/{name} \n" + "".join(f"{a.ljust(width)}  {b}\n" for a, b in rows) + "\n"


async def daemonset_undo(client: RESTClient, mapper: RESTMapper, info: ResourceInfo, ds: dict[str, Any], ns: str, *,
                         to_revision: int) -> str:
    """Apply the chosen revision's patch (default: the one before the newest); the output line."""
    name = ds["metadata"]["name"]
    revisions = await daemonset_revisions(client, mapper, ds, ns)
    if to_revision:
        target = next((cr for rev, cr in revisions if rev == to_revision), None)
        if target is None:
            raise CommandError(f"unable to find specified revision {to_revision} in history")
        wanted = to_revision
    else:
        if len(revisions) < 2:
            raise CommandError("no last revision to roll back to")
        wanted, target = revisions[-2]
    if revision_template(target) == (ds.get("spec") or {}).get("template"):
        return f"daemonset.apps/{name} skipped rollback (current template already matches revision {wanted})\n"
    await client.patch_raw(info, name, target.get("data") or {}, ns, patch_type="strategic")
    return f"daemonset.apps/{name} rolled back\n"
