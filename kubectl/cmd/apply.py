"""`pkctl apply` and `pkctl create`: manifests from files, folders (-R) and stdin to the server.

Client-side apply (the default) records the applied manifest in the
`kubectl.kubernetes.io/last-applied-configuration` annotation and sends a three-way JSON
merge patch, so fields other writers set are kept and fields removed from the manifest are
removed from the object. `--server-side` sends the manifest as an apply patch instead and
lets the server's field management merge it (`--force-conflicts` takes fields over).
Every manifest is read, and its kind resolved against the server's discovery, before anything
is written, so a bad file or an unknown kind writes nothing; server errors name the file and
the object and do not stop the other objects.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer

from kube.client import RESTClient
from kube.errors import ApiError, NotFound
from kube.resources import ResourceInfo
from kubectl.cmd.create_job import create_cronjob, create_job
from kubectl.context import CommandError, Context, emit, info_for_manifest, namespace_for, run, state
from kubectl.manifests import Manifest, read_manifests
from kubectl.merge import three_way_merge_patch
from kubectl.printers import print_objects, resource_ref

__all__ = ["LAST_APPLIED", "apply", "create"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
FIELD_MANAGER_APPLY = "kubectl-client-side-apply"
FIELD_MANAGER_SERVER_SIDE = "kubectl"
FIELD_MANAGER_CREATE = "kubectl-create"

Files = Annotated[list[str], typer.Option("-f", "--filename", help="A file, a directory, or - for stdin.")]
Recursive = Annotated[bool, typer.Option("-R", "--recursive", help="Read directories recursively.")]
DryRun = Annotated[str, typer.Option("--dry-run", help="none, client or server.")]
Output = Annotated[str | None, typer.Option("-o", "--output", help="yaml, json or name.")]


def _dry_run(value: str) -> str:
    if value not in ("none", "client", "server"):
        raise CommandError(f'Invalid dry-run value ({value}). Must be "none", "server", or "client".')
    return value


def _manifests(files: list[str], recursive: bool) -> list[Manifest]:
    if not files:
        raise CommandError("must specify one of -f and -k")
    return read_manifests(files, recursive=recursive)


def _plain(body: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(json.dumps(body, default=str)))


async def _client_side(client: RESTClient, ctx: Context, m: Manifest, info: ResourceInfo,
                       dry_run: str) -> tuple[str, dict[str, Any]]:
    body = _plain(m.body)
    ns = namespace_for(ctx, info, body)
    meta = body["metadata"]
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)
    applied = {**body, "metadata": {**meta, "annotations": annotations} if annotations else
               {k: v for k, v in meta.items() if k != "annotations"}}
    body["metadata"]["annotations"] = {**annotations,
                                       LAST_APPLIED: json.dumps(applied, sort_keys=True, separators=(",", ":"))}
    try:
        live = await client.get_raw(info, str(meta["name"]), ns)
    except NotFound:
        if dry_run == "client":
            return "created", body
        return "created", await client.create_raw(info, body, ns, dry_run=dry_run == "server")
    previous_text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        previous = json.loads(previous_text) if previous_text else None
    except ValueError:
        previous = None
    patch = three_way_merge_patch(previous, body, live)
    if not patch:
        return "unchanged", live
    if dry_run == "client":
        return "configured", live
    return "configured", await client.patch_raw(info, str(meta["name"]), patch, ns, dry_run=dry_run == "server")


async def _server_side(client: RESTClient, ctx: Context, m: Manifest, info: ResourceInfo, dry_run: str,
                       force: bool) -> tuple[str, dict[str, Any]]:
    body = _plain(m.body)
    ns = namespace_for(ctx, info, body)
    name = str(body["metadata"]["name"])
    try:
        before = await client.get_raw(info, name, ns)
    except NotFound:
        before = None
    if dry_run == "client":
        return ("created" if before is None else "serverside-applied"), body
    after = await client.patch_raw(info, name, body, ns, patch_type="apply", force=force or None,
                                   dry_run=dry_run == "server")
    return ("created" if before is None else "serverside-applied"), after


def _suffix(dry_run: str) -> str:
    return {"none": "", "client": " (dry run)", "server": " (server dry run)"}[dry_run]


Write = Callable[[RESTClient, Manifest, ResourceInfo], Awaitable[tuple[str, dict[str, Any]]]]


def _write_all(manifests: list[Manifest], manager: str, write: Write, *, action: str, mode: str,
               output: str | None) -> int:
    """Send every manifest with `write`; print kubectl's line (or the object) for each; 1 if any failed."""
    async def go() -> int:
        failed = 0
        async with state.ctx.client(manager) as client:
            mapper = await state.ctx.rest_mapper(client)
            infos = [info_for_manifest(mapper, m) for m in manifests]  # every kind known before any write
            for m, info in zip(manifests, infos, strict=True):
                try:
                    verb, obj = await write(client, m, info)
                except ApiError as e:
                    failed += 1
                    name = (m.body.get("metadata") or {}).get("name", "")
                    print(f'Error from server ({e.reason}): error when {action} "{m.source}" (line {m.line}, '
                          f'{m.body.get("kind")} "{name}"): {e.message}', file=sys.stderr)
                    continue
                if output:
                    emit(print_objects([{**obj, "__ref": resource_ref(info)}], output, as_list=False))
                else:
                    emit(f"{resource_ref(info)}/{m.body['metadata']['name']} {verb}{_suffix(mode)}\n")
        return 1 if failed else 0
    return run(go())


def apply(
    filename: Files = [],  # noqa: B006 - typer reads the default
    recursive: Recursive = False,
    server_side: Annotated[bool, typer.Option("--server-side", help="Merge on the server (field management).")] = False,
    force_conflicts: Annotated[bool, typer.Option("--force-conflicts", help="With --server-side: take over "
                                                  "fields another manager owns.")] = False,
    dry_run: DryRun = "none",
    output: Output = None,
    validate: Annotated[str, typer.Option("--validate", hidden=True)] = "true",
) -> None:
    """Apply a configuration to a resource by file name or stdin."""
    ctx = state.ctx
    mode = _dry_run(dry_run)
    manifests = _manifests(filename, recursive)

    async def write(client: RESTClient, m: Manifest, info: ResourceInfo) -> tuple[str, dict[str, Any]]:
        if server_side:
            return await _server_side(client, ctx, m, info, mode, force_conflicts)
        return await _client_side(client, ctx, m, info, mode)
    manager = FIELD_MANAGER_SERVER_SIDE if server_side else FIELD_MANAGER_APPLY
    raise typer.Exit(_write_all(manifests, manager, write, action="applying", mode=mode, output=output))


def create(
    what: Annotated[list[str] | None, typer.Argument(help="job|cronjob NAME [-- COMMAND [ARGS...]]")] = None,
    filename: Files = [],  # noqa: B006
    recursive: Recursive = False,
    dry_run: DryRun = "none",
    output: Output = None,
    validate: Annotated[str, typer.Option("--validate", hidden=True)] = "true",
    image: Annotated[str | None, typer.Option("--image", help="The image of `create job`'s container.")] = None,
    from_: Annotated[str | None, typer.Option("--from", help="create job: the CronJob to run (cronjob/NAME).")] = None,
    schedule: Annotated[str | None, typer.Option("--schedule", help="create cronjob: the cron schedule.")] = None,
) -> None:
    """Create a resource from a file or from stdin, or a Job: create job NAME --image=IMG [-- COMMAND]."""
    if what:
        if what[0] in ("cronjob", "cj"):
            raise typer.Exit(create_cronjob(what[1:], image=image, schedule=schedule))
        if what[0] != "job":
            raise CommandError(f'unknown resource to create: "{what[0]}" (pkctl creates "job" and "cronjob" by name)')
        raise typer.Exit(create_job(what[1:], image=image, from_=from_))
    ctx = state.ctx
    mode = _dry_run(dry_run)
    manifests = _manifests(filename, recursive)

    async def write(client: RESTClient, m: Manifest, info: ResourceInfo) -> tuple[str, dict[str, Any]]:
        body = _plain(m.body)
        ns = namespace_for(ctx, info, body)
        if mode == "client":
            return "created", body
        return "created", await client.create_raw(info, body, ns, dry_run=mode == "server")
    raise typer.Exit(_write_all(manifests, FIELD_MANAGER_CREATE, write, action="creating", mode=mode, output=output))
