"""Finding the container (or pod sandbox) a streaming request addresses, through the runtime's labels.

Exec, attach and port-forward name a pod by namespace and name and a container by name; the
runtime knows them only by id. Both the simulated node's handler and the CRI relay resolve
them the same way, as the kubelet's pod labels allow: the newest READY sandbox carrying the
pod's namespace/name labels, then its newest container (highest attempt) of that name.
Failures are `TargetError`s with upstream's words: 404 "pod does not exist", 404
`container not found ("<name>")`, 400 when the container is not running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from kubelet.cri.interface import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    ContainerInfo,
    ContainerState,
    PodSandbox,
    SandboxState,
)
from kubelet.streaming.target import StreamTarget, TargetError

__all__ = ["LabelledRuntime", "resolve_target"]


class LabelledRuntime(Protocol):
    """The two listing verbs of `RuntimeService` the lookup needs."""

    async def list_pod_sandbox(self, *, labels: Mapping[str, str] | None = None) -> list[PodSandbox]: ...

    async def list_containers(self, *, pod_sandbox_id: str | None = None,
                              labels: Mapping[str, str] | None = None, brief: bool = False) -> list[ContainerInfo]: ...


async def resolve_target(runtime: LabelledRuntime, *, namespace: str, pod: str,
                         container: str | None) -> StreamTarget:
    """The running container `container` of the pod (with None: the pod's sandbox); TargetError if none.

    Reads the runtime's current state on every call; safe to call concurrently.
    """
    sandboxes = [s for s in await runtime.list_pod_sandbox(labels={POD_NAMESPACE_LABEL: namespace,
                                                                   POD_NAME_LABEL: pod})
                 if s.state == SandboxState.READY]
    if not sandboxes:
        raise TargetError(404, "pod does not exist")
    sandbox = max(sandboxes, key=lambda s: s.created_at)
    if container is None:
        return StreamTarget(namespace, pod, sandbox.uid, "", "", sandbox.id)
    found = await runtime.list_containers(pod_sandbox_id=sandbox.id, labels={CONTAINER_NAME_LABEL: container},
                                          brief=True)
    if not found:
        raise TargetError(404, f'container not found ("{container}")')
    current = max(found, key=lambda c: (c.attempt, c.created_at))
    if current.state != ContainerState.RUNNING:
        raise TargetError(400, f'container "{container}" in pod "{pod}" is not running')
    return StreamTarget(namespace, pod, sandbox.uid, container, current.id, sandbox.id)
