"""`pkctl cordon|uncordon|drain NODE`: keep new pods off a node, and move its pods elsewhere.

`drain` cordons the node, then evicts its pods through the `pods/eviction` subresource (so
disruption budgets and graceful termination apply), retrying an eviction the server refuses
with 429, and waits until each evicted pod is gone. As kubectl's drain, it refuses, unless
told otherwise, to remove pods that would not come back: pods no controller owns
(`--force`), DaemonSet pods (`--ignore-daemonsets` skips them) and pods with emptyDir data
(`--delete-emptydir-data`). Mirror pods are left alone; finished pods are deleted.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Annotated, Any

import typer

from kube.api import Node, Pod
from kube.client import RESTClient
from kube.errors import ApiError, NotFound, TooManyRequests
from kube.podutil import is_phase_terminal
from kubectl.context import CommandError, emit, parse_duration, run, state

__all__ = ["cordon", "drain", "uncordon"]

NodeName = Annotated[str, typer.Argument(help="The node's name.")]
MIRROR = "kubernetes.io/config.mirror"


async def _set_unschedulable(client: RESTClient, node: str, value: bool) -> str:
    n = await client.get_raw(Node.info, node)
    verb = "cordoned" if value else "uncordoned"
    if bool((n.get("spec") or {}).get("unschedulable")) == value:
        return f"node/{node} already {verb}"
    await client.patch_raw(Node.info, node, {"spec": {"unschedulable": value or None}})
    return f"node/{node} {verb}"


def cordon(node: NodeName) -> None:
    """Mark a node as unschedulable."""
    async def go() -> int:
        async with state.ctx.client() as client:
            emit(await _set_unschedulable(client, node, True) + "\n")
        return 0
    raise typer.Exit(run(go()))


def uncordon(node: NodeName) -> None:
    """Mark a node as schedulable again."""
    async def go() -> int:
        async with state.ctx.client() as client:
            emit(await _set_unschedulable(client, node, False) + "\n")
        return 0
    raise typer.Exit(run(go()))


def _controller(pod: dict[str, Any]) -> dict[str, Any] | None:
    return next((o for o in pod["metadata"].get("ownerReferences") or [] if o.get("controller")), None)


def _classify(pods: list[dict[str, Any]], *, force: bool, ignore_daemonsets: bool, delete_emptydir: bool
              ) -> tuple[list[dict[str, Any]], dict[str, list[str]], list[str]]:
    """(pods to evict, errors by reason, warnings) with kubectl drain's rules."""
    evict: list[dict[str, Any]] = []
    errors: dict[str, list[str]] = {}
    warnings: list[str] = []
    for pod in pods:
        meta, key = pod["metadata"], f"{pod['metadata'].get('namespace')}/{pod['metadata']['name']}"
        if MIRROR in (meta.get("annotations") or {}):
            continue
        phase = (pod.get("status") or {}).get("phase")
        owner = _controller(pod)
        if is_phase_terminal(phase):
            evict.append(pod)
            continue
        if owner is not None and owner.get("kind") == "DaemonSet":
            if ignore_daemonsets:
                warnings.append(f"ignoring DaemonSet-managed Pods: {key}")
            else:
                errors.setdefault("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
                                  []).append(key)
            continue
        if owner is None and not force:
            errors.setdefault("cannot delete Pods that declare no controller (use --force to override)",
                              []).append(key)
            continue
        if any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or []) and not delete_emptydir:
            errors.setdefault("cannot delete Pods with local storage (use --delete-emptydir-data to override)",
                              []).append(key)
            continue
        if owner is None:
            warnings.append(f"deleting Pods that declare no controller: {key}")
        evict.append(pod)
    return evict, errors, warnings


async def _evict(client: RESTClient, pod: dict[str, Any], grace: int | None, deadline: float) -> None:
    meta = pod["metadata"]
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction",
                            "metadata": {"name": meta["name"], "namespace": meta["namespace"]}}
    if grace is not None and grace >= 0:
        body["deleteOptions"] = {"gracePeriodSeconds": grace}
    while True:
        try:
            await client.create_raw(Pod.info, body, meta["namespace"], name=meta["name"], subresource="eviction")
            return
        except NotFound:
            return
        except TooManyRequests as e:
            if time.monotonic() > deadline:
                raise
            print(f'error when evicting pods/"{meta["name"]}" -n "{meta["namespace"]}" (will retry after 5s): '
                  f"{e.message}", file=sys.stderr)
            await asyncio.sleep(5)


async def _gone(client: RESTClient, pod: dict[str, Any], deadline: float) -> bool:
    meta = pod["metadata"]
    while time.monotonic() < deadline:
        try:
            live = await client.get_raw(Pod.info, meta["name"], meta["namespace"])
        except NotFound:
            return True
        if live["metadata"].get("uid") != meta.get("uid"):
            return True
        await asyncio.sleep(0.3)
    return False


def drain(
    node: NodeName,
    force: Annotated[bool, typer.Option("--force", help="Also remove pods no controller owns.")] = False,
    ignore_daemonsets: Annotated[bool, typer.Option("--ignore-daemonsets", help="Skip DaemonSet pods.")] = False,
    delete_emptydir_data: Annotated[bool, typer.Option("--delete-emptydir-data",
                                                       help="Also remove pods with emptyDir data.")] = False,
    grace_period: Annotated[int, typer.Option("--grace-period", help="Seconds (-1: each pod's own).")] = -1,
    timeout: Annotated[str, typer.Option("--timeout", help="Give up after this long (0: never).")] = "0s",
    selector: Annotated[str | None, typer.Option("--pod-selector", help="Only pods matching this selector.")] = None,
) -> None:
    """Drain a node in preparation for maintenance: cordon it, then evict its pods."""
    ctx = state.ctx
    limit = parse_duration(timeout, "--timeout") or 7 * 24 * 3600.0

    async def go() -> int:
        deadline = time.monotonic() + limit
        async with ctx.client() as client:
            emit(await _set_unschedulable(client, node, True) + "\n")
            listed = await client.list_raw(Pod.info, None, field_selector=f"spec.nodeName={node}",
                                           label_selector=selector)
            evict, errors, warnings = _classify(listed.get("items") or [], force=force,
                                                ignore_daemonsets=ignore_daemonsets,
                                                delete_emptydir=delete_emptydir_data)
            if errors:
                detail = ", ".join(f"{reason}: {', '.join(keys)}" for reason, keys in errors.items())
                print(f'error: unable to drain node "{node}" due to error: {detail}, continuing command...\n'
                      f"There are pending nodes to be drained:\n {node}", file=sys.stderr)
                for reason, keys in errors.items():
                    print(f"{reason}: {', '.join(keys)}", file=sys.stderr)
                return 1
            for w in warnings:
                print(f"Warning: {w}", file=sys.stderr)
            for pod in evict:
                emit(f"evicting pod {pod['metadata']['namespace']}/{pod['metadata']['name']}\n")
            try:
                await asyncio.gather(*(_evict(client, p, grace_period, deadline) for p in evict))
            except ApiError as e:
                raise CommandError(f'unable to drain node "{node}": {e.message}') from None
            gone = await asyncio.gather(*(_gone(client, p, deadline) for p in evict))
            for pod, ok in zip(evict, gone, strict=True):
                if ok:
                    emit(f"pod/{pod['metadata']['name']} evicted\n")
            if not all(ok for ok in gone):
                raise CommandError(f'unable to drain node "{node}": timed out waiting for pods to be deleted')
            emit(f"node/{node} drained\n")
        return 0
    raise typer.Exit(run(go()))
