"""`pkctl create job NAME (--image=IMG [-- COMMAND [ARGS...]] | --from=cronjob/CJ)` and
`pkctl create cronjob NAME --image=IMG --schedule=SPEC [-- COMMAND [ARGS...]]`, as kubectl makes them.

Mirrors kubectl's `create job` and `create cronjob` (pkg/cmd/create/create_job.go,
create_cronjob.go): one container named after the object, with the image and, when given
after `--`, the command; restartPolicy Never for a Job, OnFailure for a CronJob's Jobs.
`--from=cronjob/CJ` reads the CronJob and posts a Job from its job template, annotated
`cronjob.kubernetes.io/instantiate: manual` and owned (without blocking its deletion) by the
CronJob. The server fills in the rest (selector, labels, parallelism, completions, ...).
"""

from __future__ import annotations

from typing import Any

from kube.api.batch_v1_cronjob import CRONJOB_INSTANTIATE_ANNOTATION
from kubectl.context import CommandError, emit, resolve, run, state

__all__ = ["create_job", "create_cronjob", "job_manifest", "job_from_cronjob", "cronjob_manifest"]

Obj = dict[str, Any]


def _pod_spec(name: str, image: str, command: list[str], restart_policy: str) -> Obj:
    container: Obj = {"name": name, "image": image, "resources": {}}
    if command:
        container["command"] = list(command)
    return {"containers": [container], "restartPolicy": restart_policy}


def job_manifest(name: str, *, image: str, command: list[str]) -> Obj:
    """The Job `kubectl create job` posts."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"metadata": {}, "spec": _pod_spec(name, image, command, "Never")}}}


def cronjob_manifest(name: str, *, image: str, schedule: str, command: list[str]) -> Obj:
    """The CronJob `kubectl create cronjob` posts."""
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": {
        "schedule": schedule, "jobTemplate": {"metadata": {"name": name}, "spec": {
            "template": {"metadata": {}, "spec": _pod_spec(name, image, command, "OnFailure")}}}}}


def job_from_cronjob(name: str, cronjob: Obj) -> Obj:
    """The Job `kubectl create job NAME --from=cronjob/CJ` posts: the CronJob's job template, run by hand."""
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    meta: Obj = {"name": name, "annotations": {CRONJOB_INSTANTIATE_ANNOTATION: "manual", **(tmeta.get("annotations")
                                                                                          or {})},
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cronjob["metadata"]["name"],
                                      "uid": cronjob["metadata"]["uid"], "controller": True}]}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": template.get("spec") or {}}


def _post(plural: str, kind: str, body: Obj | None, *, from_cronjob: str | None = None) -> int:
    ctx = state.ctx

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            posted = body
            if from_cronjob is not None:
                cronjob = await client.get_raw(resolve(mapper, "cronjobs.batch"), from_cronjob, ctx.namespace)
                posted = job_from_cronjob(str((body or {}).get("metadata", {}).get("name")), cronjob)
            created = await client.create_raw(resolve(mapper, plural), posted or {}, ctx.namespace)
        emit(f"{kind}/{created['metadata']['name']} created\n")
        return 0
    return run(go())


def create_job(args: list[str], *, image: str | None, from_: str | None = None) -> int:
    """Create the Job named by `args[0]` running `args[1:]`, or from a CronJob; returns the exit code."""
    if not args:
        raise CommandError("NAME is required")
    if bool(image) == bool(from_):
        raise CommandError("either --image or --from must be specified")
    if from_:
        if len(args) > 1:
            raise CommandError("cannot specify --from and command")
        kind, _, source = from_.partition("/")
        if kind.lower() not in ("cronjob", "cronjobs", "cj", "cronjob.batch", "cronjobs.batch") or not source:
            raise CommandError(f"from must be an existing cronjob: {from_}")
        return _post("jobs.batch", "job.batch", {"metadata": {"name": args[0]}}, from_cronjob=source)
    return _post("jobs.batch", "job.batch", job_manifest(args[0], image=image or "", command=args[1:]))


def create_cronjob(args: list[str], *, image: str | None, schedule: str | None) -> int:
    """Create the CronJob named by `args[0]` running `args[1:]` on `schedule`; returns the exit code."""
    if not args:
        raise CommandError("NAME is required")
    if not image:
        raise CommandError("--image must be specified")
    if not schedule:
        raise CommandError("--schedule must be specified")
    return _post("cronjobs.batch", "cronjob.batch",
                 cronjob_manifest(args[0], image=image, schedule=schedule, command=args[1:]))
