"""`pkctl wait KIND/NAME --for=...`: block until objects reach a condition, as kubectl wait.

`--for=condition=Ready` (or `=False`, any status value; case-insensitive type),
`--for=delete` and `--for=jsonpath='{.status.phase}'=Running`. Several names or `-l` wait
for each; every object is re-read on each watch event, so a condition that is already true
returns at once. Prints `<kind>/<name> condition met` per object; exits 1 with kubectl's
`timed out waiting for the condition on <resource>/<name>` after `--timeout` (default 30s).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer

from kube.client import RESTClient
from kube.errors import ApiError, NotFound
from kube.jsonpath import JSONPathError, evaluate
from kube.resources import ResourceInfo
from kubectl.context import CommandError, emit, parse_duration, resolve_targets, run, split_targets, state
from kubectl.printers import resource_ref

__all__ = ["wait", "condition_check"]

Check = Callable[[dict[str, Any] | None], bool]


def condition_check(spec: str) -> tuple[str, Check]:
    """(what, predicate over the object or None when gone) for a `--for` value."""
    if spec == "delete":
        return "delete", lambda obj: obj is None
    if spec.startswith("condition="):
        cond, _, value = spec[len("condition="):].partition("=")
        value = value or "True"

        def has_condition(obj: dict[str, Any] | None) -> bool:
            if obj is None:
                return False
            return any(str(c.get("type", "")).lower() == cond.lower() and str(c.get("status")) == value
                       for c in (obj.get("status") or {}).get("conditions") or [])
        return f"condition {cond}={value}", has_condition
    if spec.startswith("jsonpath="):
        expr, eq, value = spec[len("jsonpath="):].rpartition("=")
        if not eq or not expr:
            expr, value = spec[len("jsonpath="):], ""
        path = expr.strip().strip("'\"")
        if path.startswith("{") and path.endswith("}"):
            path = path[1:-1]
        try:
            evaluate(path, {})
        except JSONPathError as e:
            raise CommandError(f"unrecognized JSONPath expression {expr!r}: {e}") from None

        def matches(obj: dict[str, Any] | None) -> bool:
            if obj is None:
                return False
            found = evaluate(path, obj)
            if not value:
                return bool(found)
            return any((str(v).lower() if isinstance(v, bool) else str(v)) == value for v in found)
        return f"jsonpath {expr}", matches
    raise CommandError(f"unrecognized condition: {spec!r}")


async def _next_change(client: RESTClient, info: ResourceInfo, ns: str | None, name: str, *,
                       rv: str | None, timeout_seconds: int) -> None:
    """Returns at the first event on `name` after `rv` that is not a bookmark."""
    async for event in client.watch_raw(info, ns, resource_version=rv, field_selector=f"metadata.name={name}",
                                        timeout_seconds=timeout_seconds):
        if event.get("type") != "BOOKMARK":
            return


async def _wait_one(client: RESTClient, info: ResourceInfo, ns: str | None, name: str, check: Check,
                    deadline: float) -> bool:
    while True:
        try:
            obj: dict[str, Any] | None = await client.get_raw(info, name, ns)
        except NotFound:
            obj = None
        if check(obj):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        rv = obj["metadata"].get("resourceVersion") if obj else None
        change = _next_change(client, info, ns, name, rv=rv, timeout_seconds=int(remaining) + 1)
        try:
            await asyncio.wait_for(change, min(remaining, 5.0))
        except (TimeoutError, ApiError):
            pass


def wait(
    resources: Annotated[list[str] | None, typer.Argument(help="TYPE/NAME..., TYPE NAME..., or TYPE with -l")] = None,
    for_: Annotated[str, typer.Option("--for", help="delete, condition=NAME[=VALUE] or jsonpath=EXPR=VALUE")] = "",
    timeout: Annotated[str, typer.Option("--timeout", help="How long to wait (default 30s).")] = "30s",
    selector: Annotated[str | None, typer.Option("-l", "--selector")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every object of the type.")] = False,
) -> None:
    """Wait for a specific condition on one or many resources."""
    ctx = state.ctx
    if not for_:
        raise CommandError("--for must be set to one of: delete, condition=condition-name, jsonpath=expression")
    _, check = condition_check(for_)
    limit = parse_duration(timeout, "--timeout")
    typed = split_targets(list(resources or []), verb="wait")

    async def go() -> int:
        deadline = time.monotonic() + limit
        async with ctx.client() as client:
            targets = resolve_targets(await ctx.rest_mapper(client), typed)
            work: list[tuple[ResourceInfo, str | None, str]] = []
            for info, names in targets:
                ns = ctx.namespace if info.namespaced else None
                if names:
                    work.extend((info, ns, n) for n in names)
                    continue
                if not (selector or all_):
                    raise CommandError("resource(s) were provided, but no name was specified")
                listed = await client.list_raw(info, ctx.ns_for(info), label_selector=selector)
                work.extend((info, i["metadata"].get("namespace"), i["metadata"]["name"])
                            for i in listed.get("items") or [])
                if not work:
                    raise CommandError("no matching resources found")
            results = await asyncio.gather(*(_wait_one(client, info, ns, n, check, deadline) for info, ns, n in work))
        failed = 0
        for (info, _, name), ok in zip(work, results, strict=True):
            if ok:
                emit(f"{resource_ref(info)}/{name} condition met\n")
            else:
                failed += 1
                print(f"error: timed out waiting for the condition on {info.qualified}/{name}", file=sys.stderr)
        return 1 if failed else 0
    raise typer.Exit(run(go()))
