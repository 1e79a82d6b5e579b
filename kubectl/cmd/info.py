"""`pkctl api-resources` (the server's discovery, each group in its preferred version) and `pkctl version`."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
import yaml

from kube.resources import ResourceInfo
from kubectl.context import emit, run, state

__all__ = ["CLIENT_VERSION", "api_resources", "version"]

CLIENT_VERSION = "v1.30.0-picokube"


def _row(r: ResourceInfo, *, wide: bool) -> list[str]:
    row = [r.plural, ",".join(r.short_names), r.api_version, str(r.namespaced).lower(), r.kind]
    return [*row, ",".join(r.verbs), ",".join(r.categories)] if wide else row


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
            resources = (await state.ctx.rest_mapper(client)).preferred()
        rows = []
        for r in sorted(resources, key=lambda r: (r.group, r.plural)):
            if namespaced is not None and r.namespaced != namespaced:
                continue
            if api_group is not None and r.group != api_group:
                continue
            if output == "name":
                rows.append([r.qualified])
                continue
            rows.append(_row(r, wide=output == "wide"))
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
