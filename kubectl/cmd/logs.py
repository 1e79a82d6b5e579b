"""`pkctl logs`: a container's output through the API server's `pods/log` (which asks the kubelet).

`-c` picks the container (required when the pod has several, as kubectl says); `-f` streams
until the container stops; `--tail`, `--timestamps`, `--since` (a duration) and `-p` for the
previous instance map to the same query parameters kubectl sends. A workload (`deploy/NAME`,
`rs/NAME`, `sts/NAME`, `ds/NAME`, `job/NAME`, `rc/NAME`) reads its first pod, as kubectl does.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kube.api import Pod
from kubectl.context import emit, parse_duration, run, state
from kubectl.pod_target import pod_name

__all__ = ["logs"]


def logs(
    pod: Annotated[str, typer.Argument(help="POD, pod/NAME or a workload such as deploy/NAME")],
    container_arg: Annotated[str | None, typer.Argument(metavar="[CONTAINER]", help="The container.")] = None,
    container: Annotated[str | None, typer.Option("-c", "--container", help="The container.")] = None,
    follow: Annotated[bool, typer.Option("-f", "--follow", help="Stream the logs.")] = False,
    previous: Annotated[bool, typer.Option("-p", "--previous", help="The previous instance's logs.")] = False,
    tail: Annotated[int, typer.Option("--tail", help="Lines from the end (-1: all).")] = -1,
    timestamps: Annotated[bool, typer.Option("--timestamps", help="Prefix each line with its time.")] = False,
    since: Annotated[str | None, typer.Option("--since", help="Only newer lines, e.g. 5s, 2m, 3h.")] = None,
) -> None:
    """Print the logs for a container in a pod."""
    ctx = state.ctx
    since_seconds = int(max(1, parse_duration(since, "--since"))) if since else None

    async def go() -> int:
        async with ctx.client() as client:
            name = await pod_name(client, ctx.namespace, pod, verb="get the logs of")
            params: dict[str, Any] = {"container": container or container_arg,
                                      "follow": "true" if follow else None,
                                      "previous": "true" if previous else None,
                                      "tailLines": tail if tail >= 0 else None,
                                      "timestamps": "true" if timestamps else None,
                                      "sinceSeconds": since_seconds}
            params = {k: v for k, v in params.items() if v is not None}
            path = Pod.info.object_path(name, ctx.namespace, "log")
            if not follow:
                emit(str(await client.request("GET", path, params=params)))
                return 0
            async for chunk in client.stream_text(path, params=params):
                emit(chunk)
        return 0
    raise typer.Exit(run(go()))
