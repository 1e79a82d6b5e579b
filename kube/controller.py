"""The reconcile loop every controller runs: Request in, Result out, retries owned here.

Mirrors controller-runtime's reconcile package and `reconcileHandler`:
- `reconcile(req)` is level-based: it reads current state from listers, never trusts the
  event that queued the key, and must be safe to run twice;
- an exception requeues the key with per-item backoff (a `Conflict` is routine and logged
  at DEBUG); `TerminalError` is logged and not retried;
- `Result(requeue_after=s)` re-queues after s seconds; success forgets the backoff;
- one key is never reconciled by two workers at once: the work queue guarantees it as long
  as every `get` is matched by exactly one `done`, which the worker loop does on every
  path, a reconcile cancelled mid-flight included;
- a reconcile woken by a traced change runs in a span that continues that change's trace
  (its writes become children of it); the span records the event, the queue wait and the
  outcome, and tracing never changes the outcome.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from opentelemetry.trace import StatusCode

from kube.errors import Conflict
from kube.tracing import Hop, object_ref, reconcile_span
from kube.workqueue import ShutDown, WorkQueue

__all__ = ["Reconciler", "Request", "Result", "TerminalError", "run_workers", "split_key"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    requeue_after: float | None = None


class TerminalError(Exception):
    """A failure that retrying cannot fix; the key is not requeued."""


Reconciler = Callable[[Request], Awaitable[Result | None]]


def split_key(key: str) -> Request:
    ns, _, name = key.rpartition("/")
    return Request(ns, name)


def _outcome(span: Hop | None, error: str | None) -> None:
    if span is not None and error is not None:
        span.set_status(StatusCode.ERROR, error)


async def _reconcile_one(name: str, actor: str, kind: str | None, queue: WorkQueue[str], reconcile: Reconciler,
                         key: str) -> None:
    """Reconcile one key as a hop of the trace that queued it; CancelledError propagates, nothing else does."""
    obj = key
    if kind:
        namespace, _, obj_name = key.rpartition("/")
        obj = object_ref(kind, namespace or None, obj_name)
    with reconcile_span(f"reconcile {name}", queue.take_cause(key), actor=actor, obj=obj) as span:
        _outcome(span, await _reconcile_with_retries(name, queue, reconcile, key))


async def _reconcile_with_retries(name: str, queue: WorkQueue[str], reconcile: Reconciler, key: str) -> str | None:
    """Reconcile one key and apply the retry policy; return the error, if any."""
    try:
        result = await reconcile(split_key(key))
    except TerminalError as e:
        logger.error("Reconcile failed permanently", extra={"controller": name, "key": key, "error": str(e)})
        queue.forget(key)
        return str(e)
    except Conflict as e:
        logger.debug("Reconcile conflict, will retry", extra={"controller": name, "key": key, "error": str(e)})
        queue.add_rate_limited(key)
        return str(e)
    except Exception as e:  # noqa: BLE001 - the loop boundary: any failure is retried with backoff
        logger.warning("Reconcile failed, will retry",
                       extra={"controller": name, "key": key, "error": repr(e), "attempt": queue.num_requeues(key) + 1})
        queue.add_rate_limited(key)
        return repr(e)
    queue.forget(key)
    if result is not None and result.requeue_after is not None:
        queue.add_after(key, result.requeue_after)
    return None


async def _worker(name: str, actor: str, kind: str | None, queue: WorkQueue[str], reconcile: Reconciler) -> None:
    while True:
        try:
            key = await queue.get()
        except ShutDown:
            return
        try:
            await _reconcile_one(name, actor, kind, queue, reconcile, key)
        finally:
            queue.done(key)  # exactly once per get, also when cancelled mid-reconcile


async def run_workers(name: str, queue: WorkQueue[str], reconcile: Reconciler, workers: int = 1, *,
                      actor: str | None = None, kind: str | None = None) -> None:
    """Run `workers` reconcile loops over `queue` until cancelled or the queue shuts down.

    Each traced reconcile is a hop by `actor` (default `<name>-controller`, upstream's
    controller names) on `Kind/namespace/name` when the keys name objects of one `kind`.

    A cancelled run stops every loop; a key being reconciled then is released to the
    queue (a re-add that arrived meanwhile is queued once).
    """
    async with asyncio.TaskGroup() as tg:
        for _ in range(workers):
            tg.create_task(_worker(name, actor or f"{name}-controller", kind, queue, reconcile))
