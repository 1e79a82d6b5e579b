"""`pkctl trace KIND/NAME`: the hops of the latest change of an object and everything it caused.

The object names its trace in the `picokube.dev/trace-context` annotation (the API server
records it on every traced write); the spans come from the API server's collector
(`/debug/traces`) and are laid out by `kube.tracing.chain`. `-w` follows the trace as it
grows (long-polling the collector) and switches to a newer trace when the object gets one
(a rollout, a scale); `-o json` prints the chain as data; `--all` shows every trace the
collector still holds for the object, oldest first (in JSON, a list of chains).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from kube.client import RESTClient
from kube.tracing import extract_traceparent, traceparent_of
from kube.tracing.chain import chain, hop_line, object_name, render_text
from kubectl.context import CommandError, emit, resolve, run, state

__all__ = ["trace"]


async def _trace_id(client: RESTClient, target: str, namespace: str) -> tuple[str, str | None]:
    """(`Kind/namespace/name`, the trace id recorded on the object or None)."""
    kind, slash, name = target.partition("/")
    if not slash or not name:
        raise CommandError("pkctl trace needs KIND/NAME, e.g. deploy/web")
    info = resolve(await state.ctx.rest_mapper(client), kind)
    ns = namespace if info.namespaced else None
    obj = await client.get_raw(info, name, ns)
    sc = extract_traceparent(traceparent_of(obj.get("metadata")))
    ref = f"{info.kind}/{ns}/{name}" if ns else f"{info.kind}/{name}"
    return ref, (f"{sc.trace_id:032x}" if sc is not None else None)


async def _spans(client: RESTClient, ref: str, trace_id: str | None, wait_version: int | None = None) -> Any:
    """The spans of `trace_id` (None: of the collector's latest trace for `ref`), after `wait_version`."""
    params: dict[str, Any] = {"traceID": trace_id} if trace_id else {"object": ref}
    if wait_version is not None:
        params.update(waitVersion=wait_version, timeoutSeconds=20)
    return await client.request("GET", "/debug/traces", params=params)


async def _latest(client: RESTClient, target: str, namespace: str) -> tuple[str, str | None]:
    """The object and the trace of its latest change: a person's latest write to it if the
    collector has one, else the trace recorded on the object."""
    ref, recorded = await _trace_id(client, target, namespace)
    indexed = (await client.request("GET", "/debug/traces/latest", params={"object": ref})).get("traceID")
    return ref, indexed or recorded


def trace(
    target: Annotated[str, typer.Argument(help="KIND/NAME, e.g. deploy/web or pod/web-abc12")],
    watch: Annotated[bool, typer.Option("-w", "--watch", help="Stream hops as they happen.")] = False,
    output: Annotated[str, typer.Option("-o", "--output", help="text or json")] = "text",
    show_all: Annotated[bool, typer.Option("--all", help="Every trace held for the object, oldest first.")] = False,
) -> None:
    """Show who reacted to the latest change of an object, when, and how long each hop took."""
    ctx = state.ctx
    if output not in ("text", "json"):
        raise CommandError(f"unknown output format {output!r}: use text or json")

    async def once(client: RESTClient) -> int:
        ref, trace_id = await _latest(client, target, ctx.namespace)
        answer = await _spans(client, ref, trace_id)
        if not answer.get("spans"):
            raise CommandError(f"no trace recorded for {ref}")
        view = {"object": object_name(ref), **chain(answer["spans"])}
        emit(json.dumps(view, indent=2) + "\n" if output == "json" else render_text(view))
        return 0

    async def every(client: RESTClient) -> int:
        ref, trace_id = await _latest(client, target, ctx.namespace)
        held = (await client.request("GET", "/debug/traces/history", params={"object": ref})).get("traces") or []
        ids = [t["traceId"] for t in held] or ([trace_id] if trace_id else [])
        views = []
        for tid in ids:
            answer = await _spans(client, ref, tid)
            if answer.get("spans"):
                views.append({"object": object_name(ref), **chain(answer["spans"])})
        if not views:
            raise CommandError(f"no trace recorded for {ref}")
        emit(json.dumps(views, indent=2) + "\n" if output == "json" else "\n".join(render_text(v) for v in views))
        return 0

    async def follow(client: RESTClient) -> int:
        shown: set[str] = set()
        current: str | None = None
        version: int | None = None
        while True:
            ref, trace_id = await _latest(client, target, ctx.namespace)
            if trace_id != current:
                current, shown = trace_id, set()
                emit(f"trace {trace_id} ({ref})\n")
            answer = await _spans(client, ref, trace_id, version)
            version = int(answer.get("version") or 0)
            for hop in chain(answer.get("spans") or [])["hops"]:
                if hop["spanId"] not in shown:
                    shown.add(hop["spanId"])
                    emit(json.dumps(hop) + "\n" if output == "json" else "\n".join(hop_line(hop)) + "\n")

    async def go() -> int:
        async with ctx.client() as client:
            return await (follow(client) if watch else every(client) if show_all else once(client))
    raise typer.Exit(run(go()))
