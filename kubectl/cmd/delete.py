"""`pkctl delete`: by manifest (-f), by name, by label selector or --all; then wait until gone.

`--cascade` maps to the deletion's propagationPolicy (background, foreground, orphan) as in
kubectl; `--grace-period`, `--now` and `--force` set gracePeriodSeconds. Like kubectl it
waits, by default, until each object is really gone (or replaced by a new one of the same
name), so a following `apply` does not meet a terminating object.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Annotated

import typer

from kube.errors import NotFound
from kube.resources import ResourceInfo
from kubectl.context import (
    CommandError,
    emit,
    info_for_manifest,
    namespace_for,
    parse_duration,
    resolve_targets,
    run,
    split_targets,
    state,
)
from kubectl.manifests import read_manifests
from kubectl.printers import resource_ref

__all__ = ["delete"]


def delete(
    resources: Annotated[list[str] | None,
                         typer.Argument(help="TYPE NAME..., TYPE/NAME..., or TYPE with -l/--all")] = None,
    filename: Annotated[list[str], typer.Option("-f", "--filename", help="Delete what these manifests name.")] = [],  # noqa: B006
    recursive: Annotated[bool, typer.Option("-R", "--recursive")] = False,
    selector: Annotated[str | None, typer.Option("-l", "--selector", help="Label selector.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every object of the type in the namespace.")] = False,
    cascade: Annotated[str, typer.Option("--cascade", help="background, foreground or orphan.")] = "background",
    grace_period: Annotated[int, typer.Option("--grace-period", help="Seconds; -1: the object's own.")] = -1,
    now: Annotated[bool, typer.Option("--now", help="Grace period 1.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Grace period 0.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the objects are gone.")] = True,
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait (0: a week).")] = "0s",
    ignore_not_found: Annotated[bool, typer.Option("--ignore-not-found")] = False,
) -> None:
    """Delete resources by file names, stdin, resources and names, or by label selector."""
    ctx = state.ctx
    cascade = {"true": "background", "false": "orphan"}.get(cascade, cascade)
    if cascade not in ("background", "foreground", "orphan"):
        raise CommandError(f'invalid cascade value ({cascade}). Must be "background", "foreground", or "orphan".')
    limit = parse_duration(timeout, "--timeout") or 7 * 24 * 3600.0
    manifests = read_manifests(filename, recursive=recursive) if filename else []
    if not resources and not filename:
        raise CommandError("You must provide one or more resources by argument or filename.")
    typed = split_targets(list(resources or []), verb="delete") if resources else []

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            pending: list[tuple[ResourceInfo, str | None, str]] = []
            for m in manifests:
                info = info_for_manifest(mapper, m)
                body = dict(m.body)
                pending.append((info, namespace_for(ctx, info, body), str(body["metadata"]["name"])))
            for info, names in resolve_targets(mapper, typed):
                ns = ctx.ns_for(info)
                if not names:
                    if not (all_ or selector):
                        raise CommandError("resource(s) were provided, but no name was specified")
                    listed = await client.list_raw(info, ns, label_selector=selector)
                    found = [(i["metadata"].get("namespace"), i["metadata"]["name"]) for i in listed.get("items") or []]
                    if not found:
                        print("No resources found", file=sys.stderr)
                    pending.extend((info, n_ns, n) for n_ns, n in found)
                else:
                    pending.extend((info, ctx.namespace if info.namespaced else None, n) for n in names)
            grace = 0 if force else 1 if now else grace_period if grace_period >= 0 else None
            failed = 0
            deleted: list[tuple[ResourceInfo, str | None, str, str]] = []
            for info, ns, name in pending:
                try:
                    live = await client.get_raw(info, name, ns)
                    await client.delete_raw(info, name, ns, grace_period_seconds=grace,
                                            propagation_policy=cascade.capitalize())
                except NotFound as e:
                    if not ignore_not_found:
                        failed += 1
                        print(f"Error from server (NotFound): {e.message}", file=sys.stderr)
                    continue
                deleted.append((info, ns, name, str((live.get("metadata") or {}).get("uid"))))
                emit(f'{resource_ref(info)} "{name}" deleted\n')
            if wait:
                deadline = time.monotonic() + limit
                for info, ns, name, uid in deleted:
                    while True:
                        try:
                            live = await client.get_raw(info, name, ns)
                        except NotFound:
                            break
                        if str((live.get("metadata") or {}).get("uid")) != uid:
                            break
                        if time.monotonic() > deadline:
                            print(f"error: timed out waiting for the condition on {info.qualified}/{name}",
                                  file=sys.stderr)
                            return 1
                        await asyncio.sleep(0.2)
            return 1 if failed else 0
    raise typer.Exit(run(go()))
