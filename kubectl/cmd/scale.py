"""`pkctl scale KIND/NAME --replicas N`: sets spec.replicas through the `scale` subresource."""

from __future__ import annotations

from typing import Annotated

import typer

from kubectl.context import CommandError, emit, one_target, resolve, run, state
from kubectl.printers import resource_ref

__all__ = ["scale"]


def scale(
    resource: Annotated[list[str], typer.Argument(help="TYPE/NAME or TYPE NAME (deployment, replicaset)")],
    replicas: Annotated[int, typer.Option("--replicas", help="The new number of replicas.")] = -1,
) -> None:
    """Set a new size for a deployment or replica set."""
    ctx = state.ctx
    if replicas < 0:
        raise CommandError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    kind, name = one_target(resource, verb="scale")

    async def go() -> int:
        async with ctx.client() as client:
            info = resolve(await ctx.rest_mapper(client), kind)
            if "scale" not in info.subresources:
                raise CommandError(f'no scaler has been implemented for {{"{info.group}" "{info.kind}"}}')
            await client.patch_raw(info, name, {"spec": {"replicas": replicas}}, ctx.namespace, subresource="scale")
        emit(f"{resource_ref(info)}/{name} scaled\n")
        return 0
    raise typer.Exit(run(go()))
