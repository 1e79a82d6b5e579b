"""`pkctl api-resources` (from the server's discovery documents) and `pkctl version`."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
import yaml

from kube.client import RESTClient
from kubectl.context import emit, run, state

__all__ = ["CLIENT_VERSION", "api_resources", "version"]

CLIENT_VERSION = "v1.30.0-picokube"


async def _discover(client: RESTClient) -> list[dict[str, Any]]:
    """Every top-level resource the server serves, with its group version."""
    out: list[dict[str, Any]] = []
    core = await client.request("GET", "/api/v1")
    out.extend({**r, "groupVersion": "v1"} for r in core.get("resources") or [])
    groups = await client.request("GET", "/apis")
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("groupVersion")
        if not preferred:
            continue
        listed = await client.request("GET", f"/apis/{preferred}")
        out.extend({**r, "groupVersion": preferred} for r in listed.get("resources") or [])
    return [r for r in out if "/" not in r.get("name", "")]


def api_resources(
    namespaced: Annotated[bool | None, typer.Option("--namespaced", help="Only namespaced (true) or "
                                                    "cluster-scoped (false) resources.")] = None,
    api_group: Annotated[str | None, typer.Option("--api-group", help="Only this API group ('' for core).")] = None,
    output: Annotated[str | None, typer.Option("-o", "--output", help="wide or name.")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers")] = False,
) -> None:
    """Print the supported API resources on the server."""
    async def go() -> int:
        async with state.ctx.client() as client:
            resources = await _discover(client)
        rows = []
        for r in sorted(resources, key=lambda r: (r["groupVersion"].rpartition("/")[0], r["name"])):
            group = r["groupVersion"].rpartition("/")[0]
            if namespaced is not None and bool(r.get("namespaced")) != namespaced:
                continue
            if api_group is not None and group != api_group:
                continue
            if output == "name":
                rows.append([f"{r['name']}.{group}" if group else r["name"]])
                continue
            row = [r["name"], ",".join(r.get("shortNames") or []), r["groupVersion"],
                   str(bool(r.get("namespaced"))).lower(), r.get("kind", "")]
            if output == "wide":
                row += [",".join(r.get("verbs") or []), ",".join(r.get("categories") or [])]
            rows.append(row)
        if output == "name":
            emit("".join(r[0] + "\n" for r in rows))
            return 0
        header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"] + \
            (["VERBS", "CATEGORIES"] if output == "wide" else [])
        grid = rows if no_headers else [header, *rows]
        widths = [max(len(r[i]) for r in grid) for i in range(len(header))]
        emit("".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() + "\n" for r in grid))
        return 0
    raise typer.Exit(run(go()))


def version(
    client_only: Annotated[bool, typer.Option("--client", help="Only the client's version.")] = False,
    output: Annotated[str | None, typer.Option("-o", "--output", help="yaml or json.")] = None,
) -> None:
    """Print the client and server version information."""
    ctx = state.ctx

    async def go() -> int:
        client_info = {"gitVersion": CLIENT_VERSION, "platform": sys.platform}
        server_info: dict[str, Any] | None = None
        if not client_only and ctx.config is not None:
            async with ctx.client() as client:
                server_info = dict(await client.request("GET", "/version"))
        if output:
            doc: dict[str, Any] = {"clientVersion": client_info}
            if server_info is not None:
                doc["serverVersion"] = server_info
            emit(json.dumps(doc, indent=2) + "\n" if output == "json" else
                 yaml.safe_dump(doc, default_flow_style=False))
            return 0
        emit(f"Client Version: {CLIENT_VERSION}\n")
        if server_info is not None:
            emit(f"Server Version: {server_info.get('gitVersion')}\n")
        return 0
    raise typer.Exit(run(go()))
