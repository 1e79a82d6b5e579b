"""`pkctl create job NAME --image=IMG [-- COMMAND [ARGS...]]`: a Job running one container, as kubectl makes it.

Mirrors kubectl's `create job` (pkg/cmd/create/create_job.go): one container named after
the Job, with the image and, when given after `--`, the command; restartPolicy Never. The
server fills in the rest (selector, labels, parallelism, completions, backoffLimit).
"""

from __future__ import annotations

from typing import Any

from kubectl.context import CommandError, emit, resolve, run, state

__all__ = ["create_job", "job_manifest"]

Obj = dict[str, Any]


def job_manifest(name: str, *, image: str, command: list[str]) -> Obj:
    """The Job `kubectl create job` posts."""
    container: Obj = {"name": name, "image": image, "resources": {}}
    if command:
        container["command"] = list(command)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"metadata": {}, "spec": {"containers": [container], "restartPolicy": "Never"}}}}


def create_job(args: list[str], *, image: str | None) -> int:
    """Create the Job named by `args[0]` running `args[1:]`; returns the exit code."""
    if not args:
        raise CommandError("NAME is required")
    if not image:
        raise CommandError("--image must be specified")
    ctx = state.ctx
    body = job_manifest(args[0], image=image, command=args[1:])

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            created = await client.create_raw(resolve(mapper, "jobs.batch"), body, ctx.namespace)
        emit(f"job.batch/{created['metadata']['name']} created\n")
        return 0
    return run(go())
