"""`pkctl rollout status|history|undo|restart|pause|resume deployment/NAME`, as kubectl does them.

`status`, `history`, `undo` and `restart` also take daemonset/NAME and statefulset/NAME (see
`rollout_revisions` for the first three).

- `status` watches the Deployment and reports progress in kubectl's words until it is
  rolled out (exit 0), exceeds its progress deadline (exit 1) or `--timeout` passes (exit 1).
  On a terminal the progress is one live line with a bar; elsewhere each new message is
  printed once, as kubectl prints it.
- `history` lists the revisions kept as ReplicaSets (`--revision N` shows that template).
- `undo` copies a revision's pod template back into the Deployment (default: the one before
  the current; `--to-revision N`).
- `restart` stamps the template with `kubectl.kubernetes.io/restartedAt`, which rolls every pod.
- `pause`/`resume` set spec.paused.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Annotated, Any

import typer
import yaml

from kube.client import RESTClient, RESTMapper
from kube.errors import ApiError
from kube.resources import ResourceInfo
from kube.timeutil import now_rfc3339
from kubectl.cmd.rollout_revisions import REVISIONED_KINDS, revision_history, revision_status_message, revision_undo
from kubectl.context import CommandError, color, emit, one_target, parse_duration, resolve, run, state

__all__ = ["rollout_app", "status_message"]

rollout_app = typer.Typer(no_args_is_help=True, help="Manage the rollout of a deployment, daemonset or statefulset.")
REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
TEMPLATE_HASH = "pod-template-hash"
Target = Annotated[list[str], typer.Argument(help="KIND/NAME or KIND NAME (deployment, daemonset, statefulset)")]


def _deployment(mapper: RESTMapper, kind: str, verb: str) -> ResourceInfo:
    """The resource `kind` (as typed) names, which must be Deployments (or DaemonSets and
    StatefulSets, for status, history, undo and restart)."""
    info = resolve(mapper, kind)
    if info.kind in REVISIONED_KINDS and verb in ("status", "history", "undo", "restart"):
        return info
    if info.kind != "Deployment":
        raise CommandError(f"no {verb} has been implemented for {info.kind.lower()}s; use a deployment")
    return info


def status_message(d: dict[str, Any]) -> tuple[str, bool]:
    """kubectl's rollout status line for Deployment `d`, and whether it is done.

    Raises CommandError when the Deployment exceeded its progress deadline.
    """
    name = d["metadata"]["name"]
    spec, st = d.get("spec") or {}, d.get("status") or {}
    if int(d["metadata"].get("generation") or 0) > int(st.get("observedGeneration") or 0):
        return "Waiting for deployment spec update to be observed...", False
    for cond in st.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            raise CommandError(f'deployment "{name}" exceeded its progress deadline')
    want = int(spec.get("replicas", 1))
    updated, total, available = (int(st.get(k) or 0) for k in ("updatedReplicas", "replicas", "availableReplicas"))
    prefix = f'Waiting for deployment "{name}" rollout to finish: '
    if updated < want:
        return f"{prefix}{updated} out of {want} new replicas have been updated...", False
    if total > updated:
        return f"{prefix}{total - updated} old replicas are pending termination...", False
    if available < updated:
        return f"{prefix}{available} of {updated} updated replicas are available...", False
    return f'deployment "{name}" successfully rolled out', True


def _bar(d: dict[str, Any], width: int = 20) -> str:
    want = max(1, int((d.get("spec") or {}).get("replicas", 1)))
    ready = min(want, int((d.get("status") or {}).get("availableReplicas") or 0))
    filled = width * ready // want
    return f"[{'#' * filled}{'.' * (width - filled)}] {ready}/{want}"


@rollout_app.command("status")
def status(
    resource: Target,
    timeout: Annotated[str, typer.Option("--timeout", help="Give up after this long (0: never).")] = "0s",
    watch: Annotated[bool, typer.Option("-w", "--watch/--no-watch", help="Wait for the rollout to finish.")] = True,
) -> None:
    """Show the status of the rollout, waiting for it to finish."""
    ctx = state.ctx
    kind, name = one_target(resource, verb="rollout status")
    limit = parse_duration(timeout, "--timeout")
    live = sys.stdout.isatty()

    async def go() -> int:
        deadline = time.monotonic() + limit if limit > 0 else None
        last = ""
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = _deployment(mapper, kind, "status")
            while True:
                d = await client.get_raw(info, name, ctx.namespace)
                message, done = (status_message(d) if info.kind == "Deployment"
                                  else revision_status_message(info.kind, d))
                if live and info.kind == "Deployment":
                    line = message if done else f"{_bar(d)} {message}"
                    emit(f"\r\033[K{color(line, '32') if done else line}" + ("\n" if done else ""))
                elif message != last:
                    emit(message + "\n")
                last = message
                if done or not watch:
                    return 0
                if deadline is not None and time.monotonic() > deadline:
                    if live:
                        emit("\n")
                    raise CommandError("timed out waiting for the condition")
                await _wait_for_change(client, info, name, ctx.namespace, d, deadline)
    raise typer.Exit(run(go()))


async def _wait_for_change(client: RESTClient, info: ResourceInfo, name: str, ns: str, d: dict[str, Any],
                           deadline: float | None) -> None:
    """Until the Deployment changes (a watch event), at most until `deadline` or 5 s."""
    budget = 5.0 if deadline is None else max(0.1, min(5.0, deadline - time.monotonic()))
    rv = d["metadata"].get("resourceVersion")

    async def next_event() -> None:
        async for event in client.watch_raw(info, ns, resource_version=rv, field_selector=f"metadata.name={name}",
                                            timeout_seconds=int(budget) + 1):
            if event.get("type") != "BOOKMARK":
                return
    try:
        await asyncio.wait_for(next_event(), budget)
    except (TimeoutError, ApiError):
        pass


async def _revisions(client: RESTClient, mapper: RESTMapper, d: dict[str, Any],
                     ns: str) -> list[tuple[int, dict[str, Any]]]:
    """(revision, ReplicaSet) owned by Deployment `d`, oldest first."""
    rs_info = resolve(mapper, "replicasets.apps")
    uid = d["metadata"].get("uid")
    out = []
    for rs in (await client.list_raw(rs_info, ns)).get("items") or []:
        owners = (rs.get("metadata") or {}).get("ownerReferences") or []
        if any(o.get("uid") == uid and o.get("controller") for o in owners):
            rev = ((rs["metadata"].get("annotations") or {}).get(REVISION))
            if rev and rev.isdigit():
                out.append((int(rev), rs))
    return sorted(out, key=lambda p: p[0])


def _template_of(rs: dict[str, Any]) -> dict[str, Any]:
    template = dict((rs.get("spec") or {}).get("template") or {})
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != TEMPLATE_HASH}
    meta["labels"] = labels
    template["metadata"] = meta
    return template


@rollout_app.command("history")
def history(
    resource: Target,
    revision: Annotated[int, typer.Option("--revision", help="Show this revision's pod template.")] = 0,
) -> None:
    """View previous rollout revisions and configurations."""
    ctx = state.ctx
    kind, name = one_target(resource, verb="rollout history")

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = _deployment(mapper, kind, "history")
            d = await client.get_raw(info, name, ctx.namespace)
            if info.kind in REVISIONED_KINDS:
                emit(await revision_history(client, mapper, info, d, ctx.namespace, revision=revision))
                return 0
            revisions = await _revisions(client, mapper, d, ctx.namespace)
        if revision:
            found = next((rs for rev, rs in revisions if rev == revision), None)
            if found is None:
                raise CommandError("unable to find the specified revision")
            body = yaml.safe_dump({"Pod Template": _template_of(found)}, sort_keys=False, default_flow_style=False)
            emit(f"deployment.apps/{name} with revision #{revision}\n{body}")
            return 0
        rows = [("REVISION", "CHANGE-CAUSE")] + [
            (str(rev), (rs["metadata"].get("annotations") or {}).get(CHANGE_CAUSE) or "<none>")
            for rev, rs in revisions]
        width = max(len(r[0]) for r in rows)
        emit(f"deployment.apps/{name} \n" + "".join(f"{a.ljust(width)}  {b}\n" for a, b in rows) + "\n")
        return 0
    raise typer.Exit(run(go()))


@rollout_app.command("undo")
def undo(
    resource: Target,
    to_revision: Annotated[int, typer.Option("--to-revision",
                                             help="The revision to go back to (0: the previous).")] = 0,
) -> None:
    """Undo a previous rollout."""
    ctx = state.ctx
    kind, name = one_target(resource, verb="rollout undo")

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = _deployment(mapper, kind, "undo")
            d = await client.get_raw(info, name, ctx.namespace)
            if info.kind in REVISIONED_KINDS:
                emit(await revision_undo(client, mapper, info, d, ctx.namespace, to_revision=to_revision))
                return 0
            revisions = await _revisions(client, mapper, d, ctx.namespace)
            if to_revision:
                target = next((rs for rev, rs in revisions if rev == to_revision), None)
                if target is None:
                    raise CommandError(f"unable to find specified revision {to_revision} in history")
                wanted = to_revision
            else:
                if len(revisions) < 2:
                    raise CommandError(f'no rollout history found for deployment "{name}"')
                wanted, target = revisions[-2]
            template = _template_of(target)
            if template == _template_of({"spec": {"template": (d.get("spec") or {}).get("template")}}):
                emit(f"deployment.apps/{name} skipped rollback (current template already matches revision "
                     f"{wanted})\n")
                return 0
            await client.patch_raw(info, name, [{"op": "replace", "path": "/spec/template", "value": template}],
                                   ctx.namespace, patch_type="json")
        emit(f"deployment.apps/{name} rolled back\n")
        return 0
    raise typer.Exit(run(go()))


@rollout_app.command("restart")
def restart(resource: Target) -> None:
    """Restart a deployment, daemonset or statefulset: every pod is replaced, within the rollout strategy."""
    ctx = state.ctx
    kind, name = one_target(resource, verb="rollout restart")
    stamp = now_rfc3339()

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = _deployment(mapper, kind, "restart")
            d = await client.get_raw(info, name, ctx.namespace)
            if (d.get("spec") or {}).get("paused"):
                raise CommandError(f"deployments \"{name}\" can't restart paused deployment (run rollout resume first)")
            patch = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}
            await client.patch_raw(info, name, patch, ctx.namespace, patch_type="strategic")
        emit(f"{info.kind.lower()}.{info.group}/{name} restarted\n")
        return 0
    raise typer.Exit(run(go()))


def _set_paused(resource: list[str], paused: bool) -> None:
    ctx = state.ctx
    verb = "pause" if paused else "resume"
    kind, name = one_target(resource, verb=f"rollout {verb}")

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = _deployment(mapper, kind, verb)
            d = await client.get_raw(info, name, ctx.namespace)
            if bool((d.get("spec") or {}).get("paused")) == paused:
                raise CommandError(f'deployments.apps "{name}" is {"already" if paused else "not"} paused')
            await client.patch_raw(info, name, {"spec": {"paused": paused}}, ctx.namespace)
        emit(f"deployment.apps/{name} {'paused' if paused else 'resumed'}\n")
        return 0
    raise typer.Exit(run(go()))


@rollout_app.command("pause")
def pause(resource: Target) -> None:
    """Mark the deployment as paused: template changes do not roll until resumed."""
    _set_paused(resource, True)


@rollout_app.command("resume")
def resume(resource: Target) -> None:
    """Resume a paused deployment."""
    _set_paused(resource, False)
