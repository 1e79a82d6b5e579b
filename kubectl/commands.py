"""pkctl's verbs. Each is a `Command`: its flags, and an async `run` against one RESTClient.

What each prints follows kubectl: `deployment.apps/web created|configured|unchanged`,
`pod "x" deleted`, the server's Table columns for `get`. Client-side apply records the
applied manifest in the `kubectl.kubernetes.io/last-applied-configuration` annotation and
sends a three-way JSON merge patch, so fields other writers own are kept.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import yaml

from kube.api import Pod
from kube.client import RESTClient
from kube.client.config import ClientConfig
from kube.errors import ApiError, NotFound
from kube.resources import ResourceInfo, resolve_resource, resource_for_kind
from kubectl.manifests import Manifest, read_manifests
from kubectl.merge import three_way_merge_patch
from kubectl.printers import print_objects, print_table, resource_ref

__all__ = ["COMMANDS", "Command", "CommandError", "Context"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
FIELD_MANAGER_APPLY = "kubectl-client-side-apply"
FIELD_MANAGER_CREATE = "kubectl-create"
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
CLIENT_VERSION = "v1.30.0-picokube"


class CommandError(Exception):
    """A usage error; printed as `error: <message>`."""


@dataclass
class Context:
    config: ClientConfig | None
    namespace: str | None
    namespace_explicit: bool

    def client(self, field_manager: str = "kubectl") -> RESTClient:
        assert self.config is not None
        return RESTClient(self.config, user_agent="pkctl/picokube", field_manager=field_manager)


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Context, argparse.Namespace], Awaitable[int]]
    needs_server: bool = True


def _info_for(m: Manifest) -> ResourceInfo:
    info = resource_for_kind(str(m.body["apiVersion"]), str(m.body["kind"]))
    if info is None:
        name = (m.body.get("metadata") or {}).get("name", "")
        ns = (m.body.get("metadata") or {}).get("namespace", "")
        raise CommandError(f'resource mapping not found for name: "{name}" namespace: "{ns}" from "{m.source}": '
                           f'no matches for kind "{m.body["kind"]}" in version "{m.body["apiVersion"]}"\n'
                           "ensure CRDs are installed first")
    return info


def _namespace_of(ctx: Context, info: ResourceInfo, body: dict[str, Any], source: str) -> str | None:
    if not info.namespaced:
        return None
    meta = body.setdefault("metadata", {})
    given = meta.get("namespace")
    if given and ctx.namespace_explicit and given != ctx.namespace:
        raise CommandError(f"the namespace from the provided object \"{given}\" does not match the namespace "
                           f"\"{ctx.namespace}\". You must pass '--namespace={given}' to perform this operation.")
    meta["namespace"] = given or ctx.namespace
    return str(meta["namespace"])


def _resolve(name: str) -> ResourceInfo:
    info = resolve_resource(name)
    if info is None:
        raise CommandError(f'the server doesn\'t have a resource type "{name}"')
    return info


def _emit(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# --- apply / create ------------------------------------------------------------------------
def _add_file_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--filename", action="append", default=[], help="file, directory or - for stdin")
    p.add_argument("-R", "--recursive", action="store_true")
    p.add_argument("--dry-run", choices=["none", "client", "server"], default="none", nargs="?", const="client")
    p.add_argument("-o", "--output", choices=["yaml", "json", "name"])
    p.add_argument("--validate", default="true")


async def _apply_one(client: RESTClient, ctx: Context, m: Manifest, dry_run: str) -> str:
    info = _info_for(m)
    body = json.loads(json.dumps(m.body, default=str))
    ns = _namespace_of(ctx, info, body, m.source)
    meta = body["metadata"]
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)
    applied = {**body, "metadata": {**meta, "annotations": annotations} if annotations else
               {k: v for k, v in meta.items() if k != "annotations"}}
    last = json.dumps(applied, sort_keys=True, separators=(",", ":"))
    body["metadata"]["annotations"] = {**annotations, LAST_APPLIED: last}
    ref = f"{resource_ref(info)}/{meta['name']}"
    suffix = {"none": "", "client": " (dry run)", "server": " (server dry run)"}[dry_run]
    try:
        live = await client.get_raw(info, str(meta["name"]), ns)
    except NotFound:
        if dry_run != "client":
            await client.create_raw(info, body, ns, dry_run=dry_run == "server")
        return f"{ref} created{suffix}"
    previous_text = ((live.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
    try:
        previous = json.loads(previous_text) if previous_text else None
    except ValueError:
        previous = None
    patch = three_way_merge_patch(previous, body, live)
    if not patch:
        return f"{ref} unchanged{suffix}"
    if dry_run != "client":
        await client.patch_raw(info, str(meta["name"]), patch, ns, dry_run=dry_run == "server")
    return f"{ref} configured{suffix}"


async def run_apply(ctx: Context, args: argparse.Namespace) -> int:
    if not args.filename:
        raise CommandError("must specify one of -f and -k")
    manifests = read_manifests(args.filename, recursive=args.recursive)
    for m in manifests:
        _info_for(m)  # every kind is known before anything is written
    failed = 0
    async with ctx.client(FIELD_MANAGER_APPLY) as client:
        for m in manifests:
            try:
                _emit(await _apply_one(client, ctx, m, args.dry_run) + "\n")
            except ApiError as e:
                failed += 1
                name = (m.body.get("metadata") or {}).get("name", "")
                print(f'Error from server ({e.reason}): error when applying "{m.source}" (line {m.line}, '
                      f'{m.body.get("kind")} "{name}"): {e.message}', file=sys.stderr)
    return 1 if failed else 0


async def run_create(ctx: Context, args: argparse.Namespace) -> int:
    if not args.filename:
        raise CommandError("must specify one of -f and -k")
    manifests = read_manifests(args.filename, recursive=args.recursive)
    for m in manifests:
        _info_for(m)
    failed = 0
    async with ctx.client(FIELD_MANAGER_CREATE) as client:
        for m in manifests:
            info = _info_for(m)
            body = json.loads(json.dumps(m.body, default=str))
            ns = _namespace_of(ctx, info, body, m.source)
            try:
                created = await client.create_raw(info, body, ns, dry_run=args.dry_run == "server")
            except ApiError as e:
                failed += 1
                print(f'Error from server ({e.reason}): error when creating "{m.source}": {e.message}',
                      file=sys.stderr)
                continue
            _emit(f"{resource_ref(info)}/{created['metadata']['name']} created\n")
    return 1 if failed else 0


# --- get -------------------------------------------------------------------------------------
def _add_get_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("resources", nargs="*", help="TYPE[,TYPE...] [NAME...] or TYPE/NAME ...")
    p.add_argument("-o", "--output", choices=["wide", "yaml", "json", "name"])
    p.add_argument("-l", "--selector")
    p.add_argument("--field-selector")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("-f", "--filename", action="append", default=[])


def _targets(words: list[str]) -> list[tuple[ResourceInfo, list[str]]]:
    """`pods`, `pods a b`, `pods,deploy`, `pod/a deploy/b` -> [(info, names)]."""
    if not words:
        raise CommandError("you must specify the type of resource to get")
    if all("/" in w for w in words):
        out: list[tuple[ResourceInfo, list[str]]] = []
        for w in words:
            kind, _, name = w.partition("/")
            out.append((_resolve(kind), [name]))
        return out
    if any("/" in w for w in words):
        raise CommandError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form")
    kinds = [_resolve(k) for k in words[0].split(",") if k]
    return [(info, words[1:]) for info in kinds]


async def run_get(ctx: Context, args: argparse.Namespace) -> int:
    targets = _targets(args.resources)
    structured = args.output in ("yaml", "json", "name")
    tables: list[tuple[ResourceInfo, dict[str, Any]]] = []
    objects: list[dict[str, Any]] = []
    missing: list[str] = []
    async with ctx.client() as client:
        for info, names in targets:
            ns = None if (args.all_namespaces or not info.namespaced) else ctx.namespace
            headers = {} if structured else {"Accept": TABLE_ACCEPT}
            if names:
                for name in names:
                    try:
                        got = await client.request("GET", info.object_path(name, ns), headers=headers,
                                                   params={"includeObject": "Object"} if not structured else None)
                    except NotFound as e:
                        missing.append(e.message)
                        continue
                    if structured:
                        objects.append({**got, "__ref": resource_ref(info)})
                    else:
                        tables.append((info, got))
            else:
                params = {"labelSelector": args.selector, "fieldSelector": args.field_selector}
                if not structured:
                    params["includeObject"] = "Object"
                got = await client.request("GET", info.base_path(ns), headers=headers, params=params)
                if structured:
                    kind = info.kind
                    for item in got.get("items") or []:
                        item.setdefault("apiVersion", info.api_version)
                        item.setdefault("kind", kind)
                        objects.append({**item, "__ref": resource_ref(info)})
                elif got.get("rows"):
                    tables.append((info, got))
    if structured:
        if objects or not missing:
            single = len(targets) == 1 and len(targets[0][1]) == 1
            if objects or not single:
                _emit(print_objects(objects, args.output, as_list=not single))
    elif tables:
        _emit(print_table(tables, wide=args.output == "wide", with_namespace=args.all_namespaces,
                          with_kind=len(targets) > 1, no_headers=args.no_headers))
    elif not missing:
        where = "" if args.all_namespaces or not targets[0][0].namespaced else f" in {ctx.namespace} namespace"
        print(f"No resources found{where}.", file=sys.stderr)
    for m in missing:
        print(f"Error from server (NotFound): {m}", file=sys.stderr)
    return 1 if missing else 0


# --- delete ----------------------------------------------------------------------------------
def _add_delete_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("resources", nargs="*")
    p.add_argument("-f", "--filename", action="append", default=[])
    p.add_argument("-l", "--selector")
    p.add_argument("--all", action="store_true")
    p.add_argument("--grace-period", type=int, default=-1)
    p.add_argument("--now", action="store_true")
    p.add_argument("--force", action="store_true")
    p.add_argument("--wait", default="true")
    p.add_argument("--timeout", type=float, default=0)
    p.add_argument("--cascade", default="background", choices=["background", "foreground", "orphan"])
    p.add_argument("--ignore-not-found", action="store_true")


async def run_delete(ctx: Context, args: argparse.Namespace) -> int:
    pending: list[tuple[ResourceInfo, str | None, str]] = []
    if args.filename:
        for m in read_manifests(args.filename):
            info = _info_for(m)
            body = dict(m.body)
            pending.append((info, _namespace_of(ctx, info, body, m.source), str(body["metadata"]["name"])))
    async with ctx.client() as client:
        if args.resources:
            for info, names in _targets(args.resources):
                ns = ctx.namespace if info.namespaced else None
                if not names:
                    if not (args.all or args.selector):
                        raise CommandError("resource(s) were provided, but no name was specified")
                    listed = await client.list_raw(info, ns, label_selector=args.selector)
                    names = [i["metadata"]["name"] for i in listed.get("items") or []]
                    if not names:
                        print("No resources found", file=sys.stderr)
                pending.extend((info, ns, n) for n in names)
        elif not args.filename:
            raise CommandError("You must provide one or more resources by argument or filename.")
        grace = 0 if args.force else 1 if args.now else args.grace_period if args.grace_period >= 0 else None
        failed = 0
        deleted: list[tuple[ResourceInfo, str | None, str, str]] = []
        for info, ns, name in pending:
            try:
                live = await client.get_raw(info, name, ns)
                await client.delete_raw(info, name, ns, grace_period_seconds=grace,
                                        propagation_policy=args.cascade.capitalize())
            except NotFound as e:
                if not args.ignore_not_found:
                    failed += 1
                    print(f"Error from server (NotFound): {e.message}", file=sys.stderr)
                continue
            deleted.append((info, ns, name, str((live.get("metadata") or {}).get("uid"))))
            _emit(f'{resource_ref(info)} "{name}" deleted\n')
        if args.wait.lower() == "true":
            deadline = time.monotonic() + (args.timeout or 3600)
            for info, ns, name, uid in deleted:
                while time.monotonic() < deadline:
                    try:
                        live = await client.get_raw(info, name, ns)
                    except NotFound:
                        break
                    if str((live.get("metadata") or {}).get("uid")) != uid:
                        break
                    await asyncio.sleep(0.2)
    return 1 if failed else 0


# --- logs ------------------------------------------------------------------------------------
def _add_logs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("pod")
    p.add_argument("container", nargs="?")
    p.add_argument("-c", "--container", dest="container_flag")
    p.add_argument("-f", "--follow", action="store_true")
    p.add_argument("-p", "--previous", action="store_true")
    p.add_argument("--tail", type=int, default=-1)
    p.add_argument("--timestamps", action="store_true")
    p.add_argument("--since", dest="since_seconds", type=int)


async def run_logs(ctx: Context, args: argparse.Namespace) -> int:
    name = args.pod.split("/", 1)[1] if args.pod.startswith(("pod/", "pods/", "po/")) else args.pod
    params: dict[str, Any] = {"container": args.container_flag or args.container,
                              "follow": "true" if args.follow else None,
                              "previous": "true" if args.previous else None,
                              "tailLines": args.tail if args.tail >= 0 else None,
                              "timestamps": "true" if args.timestamps else None,
                              "sinceSeconds": args.since_seconds}
    async with ctx.client() as client:
        path = Pod.info.object_path(name, ctx.namespace, "log")
        params = {k: v for k, v in params.items() if v is not None}
        if not args.follow:
            _emit(str(await client.request("GET", path, params=params)))
            return 0
        async for chunk in client.stream_text(path, params=params):
            _emit(chunk)
    return 0


# --- version ---------------------------------------------------------------------------------
def _add_version_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--client", action="store_true")
    p.add_argument("-o", "--output", choices=["yaml", "json"])


async def run_version(ctx: Context, args: argparse.Namespace) -> int:
    client_info = {"gitVersion": CLIENT_VERSION, "platform": sys.platform}
    server_info: dict[str, Any] | None = None
    if not args.client and ctx.config is not None:
        async with ctx.client() as client:
            server_info = dict(await client.request("GET", "/version"))
    if args.output:
        doc: dict[str, Any] = {"clientVersion": client_info}
        if server_info is not None:
            doc["serverVersion"] = server_info
        _emit(json.dumps(doc, indent=2) + "\n" if args.output == "json" else
              yaml.safe_dump(doc, default_flow_style=False))
        return 0
    _emit(f"Client Version: {CLIENT_VERSION}\n")
    if server_info is not None:
        _emit(f"Server Version: {server_info.get('gitVersion')}\n")
    return 0


COMMANDS: dict[str, Command] = {
    "apply": Command("Apply a configuration to a resource by file name or stdin", _add_file_args, run_apply),
    "create": Command("Create a resource from a file or from stdin", _add_file_args, run_create),
    "get": Command("Display one or many resources", _add_get_args, run_get),
    "delete": Command("Delete resources by file names, stdin, resources and names, or by label selector",
                      _add_delete_args, run_delete),
    "logs": Command("Print the logs for a container in a pod", _add_logs_args, run_logs),
    "version": Command("Print the client and server version information", _add_version_args, run_version),
}
