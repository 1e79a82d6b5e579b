"""`pkctl get`: the server's Table columns (as kubectl prints them) or the objects themselves.

Formats: the default table, `-o wide`, `yaml`, `json`, `name` and `jsonpath=TEMPLATE`;
`-l` and `--field-selector` filter on the server; `-A` lists every namespace; `-w` keeps
printing a row for each change after the first listing (`--watch-only` skips the listing)
until interrupted or `--request-timeout`-free server close. Names that do not exist are
reported as kubectl does (`Error from server (NotFound): pods "x" not found`, exit 1) while
the others still print.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from kube.client import RESTClient
from kube.errors import NotFound
from kube.jsonpath import JSONPathError, render
from kube.resources import ResourceInfo
from kubectl.context import (
    CommandError,
    Context,
    emit,
    resolve_targets,
    run,
    split_targets,
    state,
)
from kubectl.printers import print_objects, print_table, resource_ref

__all__ = ["TABLE_ACCEPT", "get"]

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
_STRUCTURED = ("yaml", "json", "name")


def _output_kind(output: str | None) -> tuple[str | None, str | None]:
    """(format, jsonpath template) from `-o`, or kubectl's error for an unknown format."""
    if output is None or output in ("wide", *_STRUCTURED):
        return output, None
    for prefix in ("jsonpath=", "jsonpath-as-json="):
        if output.startswith(prefix):
            return prefix[:-1], output[len(prefix):]
    raise CommandError(f'unable to match a printer suitable for the output format "{output}", allowed formats '
                       'are: json,jsonpath,name,wide,yaml')


def _with_kind(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("apiVersion", info.api_version)
    obj.setdefault("kind", info.kind)
    return {**obj, "__ref": resource_ref(info)}


def _structured(objects: list[dict[str, Any]], fmt: str, template: str | None, *, as_list: bool) -> str:
    if fmt in _STRUCTURED:
        return print_objects(objects, fmt, as_list=as_list)
    clean = [{k: v for k, v in o.items() if k != "__ref"} for o in objects]
    doc = {"apiVersion": "v1", "kind": "List", "items": clean, "metadata": {"resourceVersion": ""}} \
        if as_list else clean[0]
    try:
        return render(template or "", doc)
    except JSONPathError as e:
        raise CommandError(f"error parsing jsonpath {template}, {e}") from None


async def _fetch(client: RESTClient, ctx: Context, targets: list[tuple[ResourceInfo, list[str]]], structured: bool,
                 selector: str | None, field_selector: str | None
                 ) -> tuple[list[tuple[ResourceInfo, dict[str, Any]]], list[dict[str, Any]], list[str], str | None]:
    tables: list[tuple[ResourceInfo, dict[str, Any]]] = []
    objects: list[dict[str, Any]] = []
    missing: list[str] = []
    rv: str | None = None
    headers = {} if structured else {"Accept": TABLE_ACCEPT}
    for info, names in targets:
        ns = ctx.ns_for(info)
        if names:
            for name in names:
                try:
                    got = await client.request("GET", info.object_path(name, ctx.namespace if info.namespaced
                                                                         else None),
                                               headers=headers, params=None if structured else
                                               {"includeObject": "Object"})
                except NotFound as e:
                    missing.append(e.message)
                    continue
                found = got if structured else ((got.get("rows") or [{}])[0].get("object") or {})
                rv = str((found.get("metadata") or {}).get("resourceVersion") or "") or rv
                if structured:
                    objects.append(_with_kind(info, got))
                else:
                    tables.append((info, got))
            continue
        params: dict[str, Any] = {"labelSelector": selector, "fieldSelector": field_selector}
        if not structured:
            params["includeObject"] = "Object"
        got = await client.request("GET", info.base_path(ns), headers=headers, params=params)
        rv = str((got.get("metadata") or {}).get("resourceVersion") or "") or None
        if structured:
            objects.extend(_with_kind(info, item) for item in got.get("items") or [])
        elif got.get("rows"):
            tables.append((info, got))
    return tables, objects, missing, rv


async def _watch(client: RESTClient, ctx: Context, info: ResourceInfo, names: list[str], rv: str | None,
                 fmt: str | None, template: str | None, selector: str | None, field_selector: str | None) -> None:
    ns = ctx.ns_for(info)
    fs = field_selector
    if len(names) == 1:
        fs = ",".join(filter(None, [f"metadata.name={names[0]}", field_selector]))
    structured = fmt in (*_STRUCTURED, "jsonpath", "jsonpath-as-json")
    while True:
        async for event in client.watch_raw(info, ns, resource_version=rv, label_selector=selector,
                                            field_selector=fs):
            obj = event.get("object") or {}
            rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
            if event.get("type") == "BOOKMARK":
                continue
            if structured:
                emit(_structured([_with_kind(info, obj)], str(fmt), template, as_list=False))
                continue
            meta = obj.get("metadata") or {}
            try:
                table = await client.request("GET", info.object_path(meta.get("name", ""), meta.get("namespace")),
                                             headers={"Accept": TABLE_ACCEPT}, params={"includeObject": "Object"})
            except NotFound:
                continue  # deleted: kubectl prints nothing more for it either
            emit(print_table([(info, table)], wide=fmt == "wide", with_namespace=ctx.all_namespaces,
                             with_kind=False, no_headers=True))


def get(
    resources: Annotated[list[str] | None, typer.Argument(help="TYPE[,TYPE...] [NAME...] or TYPE/NAME ...")] = None,
    output: Annotated[str | None, typer.Option("-o", "--output",
                                               help="wide, yaml, json, name or jsonpath=TEMPLATE.")] = None,
    selector: Annotated[str | None, typer.Option("-l", "--selector", help="Label selector.")] = None,
    field_selector: Annotated[str | None, typer.Option("--field-selector", help="Field selector.")] = None,
    watch: Annotated[bool, typer.Option("-w", "--watch", help="After listing, watch for changes.")] = False,
    watch_only: Annotated[bool, typer.Option("--watch-only", help="Watch for changes without listing first.")] = False,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Leave out the column names.")] = False,
    show_kind: Annotated[bool, typer.Option("--show-kind", help="Prefix names with their kind.")] = False,
) -> None:
    """Display one or many resources."""
    ctx = state.ctx
    fmt, template = _output_kind(output)
    typed = split_targets(list(resources or []))
    structured = fmt in (*_STRUCTURED, "jsonpath", "jsonpath-as-json")

    async def go() -> int:
        async with ctx.client() as client:
            targets = resolve_targets(await ctx.rest_mapper(client), typed)
            if (watch or watch_only) and len(targets) > 1:
                raise CommandError("you may only specify a single resource type")
            tables, objects, missing, rv = await _fetch(client, ctx, targets, structured, selector, field_selector)
            if not watch_only:
                single = len(targets) == 1 and len(targets[0][1]) == 1
                if structured:
                    if objects or (not missing and not single):
                        emit(_structured(objects, str(fmt), template, as_list=not single))
                elif tables:
                    emit(print_table(tables, wide=fmt == "wide", with_namespace=ctx.all_namespaces,
                                     with_kind=len(targets) > 1 or show_kind, no_headers=no_headers))
                elif not missing and not watch:
                    info = targets[0][0]
                    where = "" if ctx.all_namespaces or not info.namespaced else f" in {ctx.namespace} namespace"
                    print(f"No resources found{where}.", file=sys.stderr)
            for m in missing:
                print(f"Error from server (NotFound): {m}", file=sys.stderr)
            if watch or watch_only:
                info, names = targets[0]
                await _watch(client, ctx, info, names, rv, fmt, template, selector, field_selector)
            return 1 if missing else 0
    raise typer.Exit(run(go()))
