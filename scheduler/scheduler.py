"""The scheduler: pending pods in, one Binding per pod out.

Mirrors kube-scheduler `scheduler.go` and `schedule_one.go`, in one asyncio process:
- one InformerFactory feeds a Pod informer (all namespaces) and a Node informer; the handlers
  keep the `SchedulerCache` current and queue pending pod keys;
- the scheduling loop pops a key, re-reads the pod from the informer store (level-based: a
  key for a pod that is gone, bound or no longer ours is dropped), and runs the scheduling
  cycle synchronously over the cache, so no event can change the cache mid-decision;
- a decision is *assumed* in the cache at once and bound asynchronously (POST
  pods/<name>/binding with the pod's uid), so the next pod is scheduled while the binding is
  in flight and still sees the first pod's requests. A failed binding forgets the
  assumption and retries the pod with backoff; success records a `Scheduled` event;
- a pod that fits nowhere gets `PodScheduled=False` (reason `Unschedulable`, the summary
  message) and a `FailedScheduling` event, and is retried with backoff and on cluster events;
- when preemption nominated a node, the victims are deleted (each with a `Preempted`
  event) and the pod's `status.nominatedNodeName` is set; their deletion retries the pod.
Nothing here persists: after a crash the informers' first list rebuilds everything, and pods
bound before the crash are simply not pending any more.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Coroutine, Mapping
from typing import Any

from opentelemetry.trace import StatusCode

from kube.api import Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from kube.cache import EventHandler, InformerFactory, SharedInformer
from kube.client import RESTClient
from kube.clock import Clock
from kube.errors import Conflict, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.timeutil import now_rfc3339
from kube.tracing import Hop, attrs, child_span, object_ref, reconcile_span
from kube.workqueue import ShutDown
from scheduler.cache import SchedulerCache
from scheduler.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig
from scheduler.event_handlers import ClusterEventHandlers, is_pending_for
from scheduler.framework import FitError, Framework, PluginFactory
from scheduler.metrics import SchedulerMetrics
from scheduler.plugins import IN_TREE_REGISTRY, volume_binding
from scheduler.profile_config import default_profile
from scheduler.queue import SchedulingQueue
from scheduler.schedule_one import SchedulingAlgorithm, SchedulingError
from scheduler.volume_binder import VolumeBinder, VolumeLister

__all__ = ["Scheduler"]

logger = logging.getLogger(__name__)


class Scheduler:
    """One scheduler profile bound to one API server; `run()` until cancelled."""

    def __init__(self, config: SchedulerConfig, client: RESTClient, *, clock: Clock | None = None,
                 registry: Mapping[str, PluginFactory] = IN_TREE_REGISTRY) -> None:
        self.config = config
        self.client = client
        self.factory = InformerFactory(client, clock=clock)
        self.pod_informer = self.factory.informer_for(Pod)
        self.node_informer = self.factory.informer_for(Node)
        self.cache = SchedulerCache()
        claims, volumes = self.factory.informer_for(PersistentVolumeClaim), self.factory.informer_for(PersistentVolume)
        classes = self.factory.informer_for(StorageClass)
        self.volume_lister = VolumeLister(claims.store, volumes.store, classes.store)
        self.volume_binder = VolumeBinder(client, self.volume_lister)
        if volume_binding.NAME in registry:
            registry = {**registry, volume_binding.NAME: functools.partial(volume_binding.new,
                                                                           lister=self.volume_lister)}
        self.queue = SchedulingQueue(initial_backoff=config.pod_initial_backoff_seconds,
                                     max_backoff=config.pod_max_backoff_seconds, clock=clock)
        profiles = config.profiles or (default_profile(config.scheduler_name),)
        self.algorithms = {p.scheduler_name: SchedulingAlgorithm(
            Framework(p, registry), percentage_of_nodes_to_score=config.percentage_of_nodes_to_score)
            for p in profiles}
        self.scheduler_names = frozenset(self.algorithms)
        self.recorders = {name: EventRecorder(client, component=name) for name in self.algorithms}
        handlers = ClusterEventHandlers(cache=self.cache, queue=self.queue, scheduler_name=self.scheduler_names)
        self.pod_informer.add_event_handler(EventHandler(
            on_add=handlers.on_pod_add, on_update=handlers.on_pod_update, on_delete=handlers.on_pod_delete))
        self.node_informer.add_event_handler(EventHandler(
            on_add=handlers.on_node_add, on_update=handlers.on_node_update, on_delete=handlers.on_node_delete))
        self._retry_unschedulable_on(claims, "PersistentVolumeClaimChange")
        self._retry_unschedulable_on(volumes, "PersistentVolumeChange")
        self._retry_unschedulable_on(classes, "StorageClassChange")
        self._tasks: asyncio.TaskGroup | None = None
        self._bind_slots = asyncio.Semaphore(config.parallel_binds)
        self._status_slots = asyncio.Semaphore(config.parallel_status_updates)
        self._status_in_flight: dict[str, str] = {}
        # The nominator: a preempting pod's node from the moment it preempts, before its
        # status.nominatedNodeName write comes back through the watch, so the next attempt sees
        # the nomination and waits for the victims instead of preempting on another node.
        self._nominated: dict[str, str] = {}
        self.metrics = SchedulerMetrics()

    def _retry_unschedulable_on(self, informer: SharedInformer[Any], event: str) -> None:
        """Storage changes (a claim bound, a class created) may make unschedulable pods fit."""
        def moved(*_: object) -> None:
            self.queue.move_all_to_active(event)
        informer.add_event_handler(EventHandler(on_add=moved, on_update=moved))

    async def run(self) -> None:
        """Watch, schedule and bind until cancelled; every task it starts is owned here."""
        logger.info("Starting scheduler", extra={"profiles": sorted(self.scheduler_names)})
        try:
            async with asyncio.TaskGroup() as tg:
                self._tasks = tg
                tg.create_task(self.factory.run())
                for recorder in self.recorders.values():
                    tg.create_task(recorder.run())
                await self.factory.wait_for_cache_sync()
                nodes, pods = self.cache.counts()
                logger.info("Caches synced", extra={"nodes": nodes, "bound_pods": pods, "pending": len(self.queue)})
                tg.create_task(self._schedule_loop())
        finally:
            await self.queue.shut_down()
            if self.config.metrics_file:
                self.metrics.write(self.config.metrics_file)
            logger.info("Scheduler stopped", extra=self.metrics.summary()["attempts"])

    async def _schedule_loop(self) -> None:
        while True:
            try:
                key = await self.queue.pop()
            except ShutDown:
                return
            try:
                self.schedule_one(key)
            except Exception:  # a loop boundary: one pod must not stop the scheduler
                logger.exception("Scheduling attempt failed, will retry", extra={"pod": key})
                self.queue.requeue_with_backoff(key)
            finally:
                self.queue.done(key)
            await asyncio.sleep(0)  # let bindings and informer events run between pods

    # --- the scheduling cycle (synchronous) ----------------------------------------------
    def schedule_one(self, key: str) -> None:
        """Make one scheduling attempt for the pod under `key`, as the store has it now.

        An attempt for a pod whose creation was traced runs in a span of that trace: the
        feasible and evaluated node counts and the chosen node, or the reason none fit.
        """
        ns, _, name = key.rpartition("/")
        pod = self.pod_informer.store.get(key)
        actor = (pod.spec.scheduler_name if pod is not None else None) or DEFAULT_SCHEDULER_NAME
        with reconcile_span("schedule", self.queue.cause_of(key), actor=actor,
                            obj=object_ref("Pod", ns, name)) as span:
            self._schedule_one(key, span)

    def _schedule_one(self, key: str, span: Hop | None) -> None:
        pod = self.pod_informer.store.get(key)
        if pod is None or not is_pending_for(pod, self.scheduler_names):
            self.queue.forget(key)
            self._nominated.pop(key, None)
            return
        nominated = self._nominated.get(key)
        if nominated is not None and pod.status.nominated_node_name != nominated:
            pod = pod.model_copy(update={"status": pod.status.model_copy(update={"nominated_node_name": nominated})})
        if self.cache.is_assumed(key):
            return  # its binding is in flight; the outcome requeues it if needed
        started = time.perf_counter()
        try:
            result = self.algorithm_for(pod).schedule(pod, self.cache.node_infos())
        except FitError as e:
            self.metrics.observe_attempt("unschedulable", time.perf_counter() - started)
            if span is not None:
                span.set_attribute(attrs.REASON, e.message)
                span.set_status(StatusCode.ERROR, e.message)
            self._handle_unschedulable(pod, e)
            return
        except SchedulingError as e:
            self.metrics.observe_attempt("error", time.perf_counter() - started)
            logger.warning("Scheduling attempt failed, will retry", extra={"pod": key, "error": str(e)})
            self.queue.requeue_with_backoff(key)
            return
        self.metrics.observe_attempt("scheduled", time.perf_counter() - started)
        host = result.suggested_host
        if span is not None:
            span.set_attributes({attrs.NODE: host, "scheduler.feasible_nodes": result.feasible_nodes,
                                 "scheduler.evaluated_nodes": result.evaluated_nodes,
                                 "scheduler.score": sum(result.scores.values()),
                                 "scheduler.score_breakdown": [f"{p}={v}" for p, v in sorted(result.scores.items())]})
        self.cache.assume_pod(pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": host})}),
                              host)
        logger.debug("Pod assumed", extra={"pod": key, "node": host, "feasible": result.feasible_nodes,
                                           "evaluated": result.evaluated_nodes})
        self._start(self._bind(pod, host))

    def algorithm_for(self, pod: Pod) -> SchedulingAlgorithm:
        return self.algorithms[pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME]

    def recorder_for(self, pod: Pod) -> EventRecorder:
        return self.recorders.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) or \
            next(iter(self.recorders.values()))

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        assert self._tasks is not None, "schedule_one runs only inside run()"
        self._tasks.create_task(coro)

    # --- the binding cycle (asynchronous) ------------------------------------------------
    async def _bind(self, pod: Pod, node_name: str) -> None:
        key, ns, name = pod.key, str(pod.metadata.namespace), str(pod.metadata.name)
        try:
            async with self._bind_slots:
                with child_span("bind", **{attrs.NODE: node_name}):
                    await self.volume_binder.bind_pod_volumes(pod, node_name,
                                                              still_wanted=lambda: self._still_pending(pod))
                    await self.client.bind(namespace=ns, name=name, node_name=node_name, uid=pod.metadata.uid)
        except Exception as e:  # noqa: BLE001 - any failure: undo the assumption and retry
            self.metrics.observe_binding(False)
            self.cache.forget_pod(key)
            level = logging.DEBUG if isinstance(e, (Conflict, NotFound)) else logging.WARNING
            logger.log(level, "Binding failed, will retry", extra={"pod": key, "node": node_name, "error": repr(e)})
            self.queue.requeue_with_backoff(key)
            self.queue.move_all_to_active("AssumedPodForgotten")
            return
        self.metrics.observe_binding(True)
        self.cache.finish_binding(key)
        self.queue.forget(key)
        self._nominated.pop(key, None)
        logger.info("Pod bound", extra={"pod": key, "node": node_name})
        message = f"Successfully assigned {ns}/{name} to {node_name}"
        self.recorder_for(pod).event(pod, EVENT_NORMAL, "Scheduled", message)

    def _still_pending(self, pod: Pod) -> bool:
        """The pod the binding cycle works on still exists, unchanged in identity and not being deleted."""
        current = self.pod_informer.store.get(pod.key)
        return current is not None and current.metadata.uid == pod.metadata.uid and \
            current.metadata.deletion_timestamp is None

    # --- unschedulable pods --------------------------------------------------------------
    def _handle_unschedulable(self, pod: Pod, err: FitError) -> None:
        key, message = pod.key, err.message
        logger.debug("Pod is unschedulable", extra={"pod": key, "reason": message})
        self.queue.add_unschedulable(key)
        if err.nomination is not None:
            self._nominated[key] = err.nomination.nominated_node
            self._start(self._preempt(pod, err.nomination.nominated_node, err.nomination.victims))
        self.recorder_for(pod).event(pod, EVENT_WARNING, "FailedScheduling", message)
        cond = pod.status.condition("PodScheduled")
        current = cond is not None and (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", message)
        if not current and self._status_in_flight.get(key) != message:
            self._status_in_flight[key] = message
            self._start(self._set_unschedulable_condition(pod, message))

    async def _preempt(self, pod: Pod, node_name: str, victims: tuple[Pod, ...]) -> None:
        """Nominate `node_name` for `pod` and delete the victims there (each conditional on its uid)."""
        logger.info("Preempting", extra={"pod": pod.key, "node": node_name,
                                         "victims": [v.key for v in victims]})
        for victim in victims:
            try:
                await self.client.delete(Pod, str(victim.metadata.name), victim.metadata.namespace,
                                         uid=victim.metadata.uid)
            except NotFound:
                continue
            except Exception as e:  # noqa: BLE001 - the next attempt preempts again if still needed
                logger.warning("Deleting a preemption victim failed", extra={"pod": victim.key, "error": repr(e)})
                continue
            self.recorder_for(pod).event(victim, EVENT_NORMAL, "Preempted",
                                         f"Preempted by pod {pod.metadata.uid} on node {node_name}")
        if pod.status.nominated_node_name != node_name:
            try:
                async with self._status_slots:
                    await self.client.patch(Pod, str(pod.metadata.name),
                                            {"status": {"nominatedNodeName": node_name}},
                                            pod.metadata.namespace, subresource="status")
            except (Conflict, NotFound):
                pass
            except Exception as e:  # noqa: BLE001 - best effort: preemption retries if still needed
                logger.warning("Setting nominatedNodeName failed", extra={"pod": pod.key, "error": repr(e)})

    async def _set_unschedulable_condition(self, pod: Pod, message: str) -> None:
        """Write PodScheduled=False; conditional on the pod's resourceVersion, so it never lands on a newer pod."""
        old = pod.status.condition("PodScheduled")
        transition = old.last_transition_time if old is not None and old.status == "False" else None
        conditions = [c.to_dict() for c in pod.status.conditions or [] if c.type != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
                           "lastTransitionTime": transition or now_rfc3339()})
        patch = {"metadata": {"resourceVersion": pod.metadata.resource_version}, "status": {"conditions": conditions}}
        try:
            async with self._status_slots:
                await self.client.patch(Pod, str(pod.metadata.name), patch, pod.metadata.namespace,
                                        subresource="status")
        except Exception as e:  # noqa: BLE001 - best effort: the next attempt writes it again
            level = logging.DEBUG if isinstance(e, (Conflict, NotFound)) else logging.WARNING
            logger.log(level, "Updating pod condition failed", extra={"pod": pod.key, "error": repr(e)})
        finally:
            if self._status_in_flight.get(pod.key) == message:
                del self._status_in_flight[pod.key]
