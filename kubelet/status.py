"""A pod's status as the kubelet reports it, computed from what the runtime says now.

Mirrors kubelet_pods.go `generateAPIPodStatus` and `getPhase`, reduced:
- phase: Pending while any container has not started yet; Running while any runs (or, with
  `restartPolicy: Always`, while exited ones wait for their restart); once every container
  has exited for good: Failed if one exited non-zero, else Succeeded;
- conditions PodReadyToStartContainers, Initialized, ContainersReady, Ready and the
  scheduler's PodScheduled (kept as the pod has it); `lastTransitionTime` only moves when a
  condition's status changes. Without probes a container is ready while it runs, with them
  when its readiness (and startup) probe says so;
- containerStatuses in spec order with state, lastState, restartCount, image, imageID and
  containerID (`<runtime>://<id>`); podIP/podIPs from the sandbox, hostIP from the node;
- ephemeralContainerStatuses likewise, but never ready, never restarted and without
  `started` (no probes run on them); they count for neither phase nor readiness.
The result is a plain dict in wire form, ready for a merge patch of pods/status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kube import qos
from kube.api import Pod
from kube.podutil import is_phase_terminal
from kube.timeutil import format_time, now_rfc3339
from kubelet.cri.interface import (
    ContainerInfo,
    ContainerState,
    PodSandbox,
    SandboxState,
)

__all__ = ["ContainerView", "compute_pod_status", "rfc3339"]


def rfc3339(epoch: float | None) -> str | None:
    """A runtime's epoch seconds as a metav1.Time string; None stays None."""
    return None if epoch is None else format_time(epoch)


@dataclass
class ContainerView:
    """What the kubelet knows about one spec container: its latest and previous runtime instance."""

    name: str
    image: str
    current: ContainerInfo | None = None
    previous: ContainerInfo | None = None
    waiting_reason: str | None = None
    waiting_message: str | None = None
    restart_count: int = 0
    ready: bool | None = None
    """What the probes say about the running instance (None: no opinion, ready while it runs)."""
    started: bool | None = None


def _state(info: ContainerInfo | None, runtime: str, waiting: tuple[str | None, str | None]) -> dict[str, Any]:
    if info is None or info.state == ContainerState.CREATED:
        reason, message = waiting
        w = {"reason": reason or "ContainerCreating"}
        if message:
            w["message"] = message
        return {"waiting": w}
    if info.state == ContainerState.RUNNING:
        return {"running": {"startedAt": rfc3339(info.started_at)}}
    term: dict[str, Any] = {"exitCode": info.exit_code if info.exit_code is not None else 0,
                            "reason": info.reason or ("Completed" if not info.exit_code else "Error"),
                            "startedAt": rfc3339(info.started_at), "finishedAt": rfc3339(info.finished_at),
                            "containerID": f"{runtime}://{info.id}"}
    if info.message:
        term["message"] = info.message
    return {"terminated": {k: v for k, v in term.items() if v is not None}}


def _container_status(view: ContainerView, runtime: str) -> dict[str, Any]:
    cur = view.current
    state = _state(cur, runtime, (view.waiting_reason, view.waiting_message))
    if view.waiting_reason and cur is not None and cur.state == ContainerState.EXITED:
        # Exited and waiting to be restarted: upstream shows waiting now, the exit as lastState.
        w = {"reason": view.waiting_reason, **({"message": view.waiting_message} if view.waiting_message else {})}
        last = state
        state = {"waiting": w}
    else:
        last = _state(view.previous, runtime, (None, None)) if view.previous is not None else {}
    status: dict[str, Any] = {
        "name": view.name, "image": view.image, "imageID": cur.image_ref if cur else "",
        "ready": "running" in state and view.ready is not False,
        "started": "running" in state and view.started is not False, "restartCount": view.restart_count,
        "state": state, "lastState": last,
    }
    if cur is not None:
        status["containerID"] = f"{runtime}://{cur.id}"
    return status


def _ephemeral_status(view: ContainerView, runtime: str) -> dict[str, Any]:
    status = _container_status(view, runtime)
    status.pop("started", None)
    return {**status, "ready": False, "restartCount": 0}


def _phase(pod: Pod, views: list[ContainerView]) -> str:
    policy = pod.spec.restart_policy or "Always"
    pending = running = succeeded = failed = 0
    for v in views:
        cur = v.current
        if cur is None or cur.state in (ContainerState.CREATED, ContainerState.UNKNOWN):
            if v.previous is not None and policy != "Never":
                running += 1  # restarting
            else:
                pending += 1
        elif cur.state == ContainerState.RUNNING:
            running += 1
        elif cur.exit_code == 0:
            succeeded += 1
        else:
            failed += 1
    if pending:
        return "Pending"
    if running:
        return "Running"
    if policy == "Always":
        return "Running"  # every container exited; they will be restarted
    if policy == "OnFailure" and failed:
        return "Running"
    return "Failed" if failed else "Succeeded"


def _init_done(view: ContainerView) -> bool:
    cur = view.current
    return cur is not None and cur.state == ContainerState.EXITED and cur.exit_code == 0


def _conditions(pod: Pod, sandbox_ready: bool, all_ready: bool, now: str, *,
                initialized: bool = True) -> list[dict[str, Any]]:
    old = {c.type: c for c in pod.status.conditions or []}

    def cond(type_: str, ok: bool, reason: str | None = None) -> dict[str, Any]:
        status = "True" if ok else "False"
        prev = old.get(type_)
        since = prev.last_transition_time if prev is not None and prev.status == status and \
            prev.last_transition_time else now
        c: dict[str, Any] = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": since}
        if not ok and reason:
            c["reason"] = reason
        return c

    out = [cond("PodReadyToStartContainers", sandbox_ready),
           cond("Initialized", initialized, "ContainersNotInitialized"),
           cond("Ready", all_ready, "ContainersNotReady"), cond("ContainersReady", all_ready, "ContainersNotReady")]
    scheduled = old.get("PodScheduled")
    out.append(scheduled.to_dict() if scheduled is not None else cond("PodScheduled", True))
    for c in out:
        c.pop("lastProbeTime", None)
    return out


def compute_pod_status(pod: Pod, sandbox: PodSandbox | None, views: list[ContainerView], *, runtime: str,
                       host_ip: str, now: str | None = None, init_views: list[ContainerView] | None = None,
                       initialized: bool = True, init_failed: bool = False,
                       ephemeral_views: list[ContainerView] | None = None) -> dict[str, Any]:
    """The pod's status now, in wire form; terminal phases are kept once reached.

    While init containers run the pod is Pending and not Initialized; an init container
    that failed under restartPolicy Never fails the pod.
    """
    now = now or now_rfc3339()
    statuses = [_container_status(v, runtime) for v in views]
    phase = _phase(pod, views) if initialized else ("Failed" if init_failed else "Pending")
    if is_phase_terminal(pod.status.phase):  # a finished pod never runs again
        phase = pod.status.phase
    sandbox_ready = sandbox is not None and sandbox.state == SandboxState.READY
    all_ready = bool(statuses) and all(s["ready"] for s in statuses) and phase == "Running"
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": _conditions(pod, sandbox_ready, all_ready, now, initialized=initialized),
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "startTime": pod.status.start_time or now,
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    }
    if init_views:
        status["initContainerStatuses"] = [{**_container_status(v, runtime), "ready": _init_done(v)}
                                           for v in init_views]
    if ephemeral_views:
        status["ephemeralContainerStatuses"] = [_ephemeral_status(v, runtime) for v in ephemeral_views]
    if sandbox_ready and sandbox is not None and sandbox.ip:
        status["podIP"] = sandbox.ip
        status["podIPs"] = [{"ip": sandbox.ip}]
    elif pod.status.pod_ip and not is_phase_terminal(phase):
        status["podIP"] = pod.status.pod_ip
        status["podIPs"] = [{"ip": pod.status.pod_ip}]
    return status


def qos_class(pod: Pod) -> str:
    """The pod's QoS class (see `kube.qos`)."""
    return qos.qos_class((c.resources.requests if c.resources else None, c.resources.limits if c.resources else None)
                         for c in [*(pod.spec.init_containers or []), *pod.spec.containers])
