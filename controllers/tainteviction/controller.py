"""The taint eviction controller: pods leave nodes whose NoExecute taints they do not tolerate.

Mirrors pkg/controller/tainteviction (the NoExecuteTaintManager), for any NoExecute taint,
the node lifecycle controller's not-ready / unreachable ones and those users add alike:
- nodes are the work items; a node event, or a pod bound to a node, enqueues the node;
- for every pod on the node that is not already terminating, the time it must go is worked
  out by `timing.eviction_time` (at once when a taint is not tolerated, after the smallest
  matching `tolerationSeconds` when limited, never when tolerated without limit), counted
  from the taint's `timeAdded` (or, without one, from when this controller first saw it);
- a pod that is due gets the condition DisruptionTarget=True (reason
  DeletionByTaintManager), an event TaintManagerEviction ("Marking for deletion Pod
  ns/name"), and is deleted with its own grace period, conditional on its uid;
- the node is looked at again when the next pod falls due.
"""

from __future__ import annotations

import asyncio
import logging
import math

from controllers.context import ControllerContext
from controllers.tainteviction.timing import eviction_time, no_execute_taints
from kube.api import Node, Pod, Taint
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import NotFound
from kube.events import EVENT_NORMAL, EventRecorder
from kube.podutil import is_pod_terminal
from kube.timeutil import now_rfc3339, parse_time
from kube.workqueue import WorkQueue

__all__ = ["TaintEvictionController"]

logger = logging.getLogger(__name__)

NODE_INDEX = "spec.nodeName"


def _node_index(pod: Pod) -> list[str]:
    return [pod.spec.node_name] if pod.spec.node_name else []


class TaintEvictionController:
    name = "taint-eviction-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.now = ctx.now
        self.recorder = EventRecorder(ctx.client, component="taint-eviction-controller", clock=ctx.clock)
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.nodes = ctx.informers.informer_for(Node)
        self.pods = ctx.informers.informer_for(Pod)
        self.pods.add_indexers({NODE_INDEX: _node_index})
        self._first_seen: dict[tuple[str, str, str | None], float] = {}
        self.nodes.add_event_handler(EventHandler(
            on_add=self._on_node, on_update=lambda _o, n: self._on_node(n), on_delete=self._on_node_delete))
        self.pods.add_event_handler(EventHandler(
            on_add=self._on_pod, on_update=lambda _o, n: self._on_pod(n), on_delete=lambda _p: None))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 1, kind="Node"))
        finally:
            await self.queue.shut_down()

    def _on_node(self, node: Node) -> None:
        if no_execute_taints(node.spec.taints):
            self.queue.add(str(node.metadata.name))

    def _on_node_delete(self, node: Node) -> None:
        name = str(node.metadata.name)
        self._first_seen = {k: v for k, v in self._first_seen.items() if k[0] != name}

    def _on_pod(self, pod: Pod) -> None:
        if pod.spec.node_name and pod.metadata.deletion_timestamp is None:
            node = self.nodes.store.get_by_name(None, pod.spec.node_name)
            if node is not None and no_execute_taints(node.spec.taints):
                self.queue.add(pod.spec.node_name)

    def _since(self, node: str, taint: Taint) -> float:
        added = parse_time(taint.time_added)
        if added is not None:
            return added.timestamp()
        return self._first_seen.setdefault((node, taint.key, taint.value), self.now().timestamp())

    async def reconcile(self, req: Request) -> Result | None:
        node = self.nodes.store.get_by_name(None, req.name)
        if node is None:
            return None
        taints = no_execute_taints(node.spec.taints)
        if not taints:
            return None
        now = self.now().timestamp()
        next_due = math.inf
        for pod in self.pods.store.by_index(NODE_INDEX, req.name):
            if pod.metadata.deletion_timestamp is not None or is_pod_terminal(pod):
                continue
            due = eviction_time(pod, taints, since=lambda t: self._since(req.name, t))
            if due is None:
                continue
            if due <= now:
                await self._evict(pod)
            else:
                next_due = min(next_due, due)
        return Result(requeue_after=next_due - now + 0.05) if next_due != math.inf else None

    async def _evict(self, pod: Pod) -> None:
        name, namespace = str(pod.metadata.name), pod.metadata.namespace
        self.recorder.event(pod, EVENT_NORMAL, "TaintManagerEviction", f"Marking for deletion Pod {namespace}/{name}")
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                     "message": "Taint manager: deleting due to NoExecute taint", "lastTransitionTime": now_rfc3339()}
        try:
            await self.client.patch(Pod, name, {"status": {"conditions": [condition]}}, namespace,
                                    subresource="status", patch_type="strategic")
            await self.client.delete(Pod, name, namespace, uid=pod.metadata.uid)
        except NotFound:
            return
        logger.info("Evicted pod from tainted node", extra={"pod": pod.key, "node": pod.spec.node_name})
