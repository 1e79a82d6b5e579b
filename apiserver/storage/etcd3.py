"""The etcd v3 implementation of `Storage`, over aetcd's gRPC stubs (asyncio).

Why it looks the way it does:

* The channel is our own (`etcd_channel`): aetcd's client cannot dial TLS, and etcd serves
  only TLS with client certificates in a picokube cluster.

* Every write is one etcd transaction (compare + put/delete + a read of the current value on
  the failure branch), so create-if-absent, compare-and-swap and conditional delete cost one
  round trip and a lost race comes back with the winning value for the Conflict body.
* Reads go through the raw KV stub because aetcd's range helpers cannot read at a revision
  or page with a limit.
* Watches use the raw Watch stub, one gRPC stream per watch. aetcd's own watcher drops
  progress notifications, does not resume after a broken stream and multiplexes every watch
  on one stream behind locks; owning the stream lets `watch` resume from the last delivered
  revision, surface bookmarks and tear down exactly its own stream.
* The channel has HTTP/2 keepalive on (so a dead etcd breaks a stream instead of leaving it
  silent) and a short reconnect backoff (so recovery after an etcd restart takes seconds,
  not gRPC's default of up to two minutes). Watches also send `hasleader`, making etcd end
  the stream when the member loses its leader rather than leave it stalled.

Invariants:

* no aetcd or gRPC type or exception crosses this module's boundary: failures become
  `apiserver.storage.errors` exceptions (UNAVAILABLE / DEADLINE_EXCEEDED / connection
  errors -> Unavailable, OUT_OF_RANGE -> Compacted or FutureRevision);
* every unary call carries a deadline;
* a watch delivers each event exactly once and in revision order across reconnects: it
  re-creates the stream from (last delivered revision + 1), or from a server progress
  notification's revision + 1 when that is later, and never yields an event older than the
  revision its current stream started at;
* closing a watch iterator (aclose, break + garbage collection, task cancellation) or the
  storage cancels the gRPC stream, which makes etcd drop the watcher.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import aetcd
import grpc
from aetcd import rpc

from .errors import Compacted, FutureRevision, KeyExists, KeyNotFound, RevisionConflict, StorageError, Unavailable
from .etcd_channel import EtcdChannel, EtcdTLSConfig, cluster_endpoint, parse_endpoint
from .interface import KeyValue, ListResult, WatchEvent

__all__ = ["Etcd3Storage"]

logger = logging.getLogger(__name__)

# gRPC channel options.
# * Message limits: gRPC's default receive limit is 4 MiB, too small for big lists.
# * Keepalive: ping every 10 s while calls are active (etcd refuses pings more often than every
#   5 s) and keep pinging an idle watch stream (gRPC otherwise stops after two pings without
#   data). A ping unanswered for 10 s closes the connection; with current gRPC only
#   `ping_timeout_ms` enforces that when another ping (a BDP probe) is already in flight, so
#   both are set. Measured: a SIGSTOPped etcd breaks an idle watch stream within ~15 s.
# * Reconnect backoff capped at 2 s instead of gRPC's default of 120 s.
_CHANNEL_OPTIONS: dict[str, Any] = {
    "grpc.max_receive_message_length": 64 << 20,
    "grpc.max_send_message_length": 64 << 20,
    "grpc.keepalive_time_ms": 10_000,
    "grpc.keepalive_timeout_ms": 10_000,
    "grpc.http2.ping_timeout_ms": 10_000,
    "grpc.keepalive_permit_without_calls": 0,
    "grpc.http2.max_pings_without_data": 0,
    "grpc.initial_reconnect_backoff_ms": 100,
    # Also the least time a connection attempt may take: a SIGSTOPped member accepts TCP and
    # never answers the TLS handshake, so gRPC's default of 20 s would stall a failover.
    "grpc.min_reconnect_backoff_ms": 1_000,
    "grpc.max_reconnect_backoff_ms": 2_000,
}

_HEALTH_TIMEOUT = 1.0
_WATCH_BACKOFF_INITIAL = 0.1
_WATCH_BACKOFF_MAX = 2.0
_WATCH_STABLE_AFTER = 5.0  # a stream that lived this long resets the reconnect backoff

_EVENT_DELETE = 1  # mvccpb.Event.EventType; PUT is 0

_COMPACTED_DETAIL = "compacted"
_FUTURE_DETAIL = "future revision"


class _StreamBroken(Exception):
    """Internal: the current watch stream is unusable; re-create it."""


def _encode(key: str) -> bytes:
    return key.encode("utf-8")


def _decode(key: bytes) -> str:
    return key.decode("utf-8")


def _prefix_range(prefix: str) -> tuple[bytes, bytes]:
    """The [key, range_end) of every key starting with `prefix` ("" = the whole keyspace)."""
    if not prefix:
        return b"\0", b"\0"
    start = _encode(prefix)
    return start, bytes(aetcd.utils.prefix_range_end(start))


def _kv(raw: Any) -> KeyValue:
    return KeyValue(key=_decode(raw.key), value=bytes(raw.value), mod_revision=int(raw.mod_revision),
                    create_revision=int(raw.create_revision))


def _translate(exc: BaseException, *, revision: int = 0, what: str = "") -> StorageError:
    """Map an aetcd/gRPC/timeout failure onto the storage error hierarchy."""
    where = f" ({what})" if what else ""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, grpc.aio.AioRpcError):
        code, details = exc.code(), exc.details() or ""
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
            return Unavailable(f"etcd {code.name.lower()}{where}: {details}")
        if code == grpc.StatusCode.OUT_OF_RANGE:
            if _FUTURE_DETAIL in details:
                return FutureRevision(revision)
            if _COMPACTED_DETAIL in details:
                return Compacted(revision, 0)
        return StorageError(f"etcd {code.name}{where}: {details}")
    if isinstance(exc, (aetcd.ConnectionFailedError, aetcd.ConnectionTimeoutError)):
        return Unavailable(f"etcd unreachable{where}: {exc}")
    if isinstance(exc, asyncio.TimeoutError):
        return Unavailable(f"etcd did not answer in time{where}")
    if isinstance(exc, grpc.aio.UsageError):
        return StorageError(f"etcd client used after close{where}: {exc}")
    return StorageError(f"etcd request failed{where}: {exc!r}")


def _txn_put(key: bytes, value: bytes) -> Any:
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))


def _txn_get(key: bytes) -> Any:
    return rpc.RequestOp(request_range=rpc.RangeRequest(key=key))


def _txn_delete(key: bytes) -> Any:
    return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=key, prev_kv=True))


def _cmp(key: bytes, target: str, result: str, value: int) -> Any:
    """A Compare on `target` (VERSION/CREATE/MOD) of `key` with `result` (EQUAL/GREATER/...)."""
    c = rpc.Compare(key=key, target=getattr(rpc.Compare, target), result=getattr(rpc.Compare, result))
    if target == "VERSION":
        c.version = value
    elif target == "CREATE":
        c.create_revision = value
    else:
        c.mod_revision = value
    return c


def _failure_kv(resp: Any) -> KeyValue | None:
    """The KeyValue read by a failed transaction's single range op (None: key missing)."""
    for op in resp.responses:
        if op.WhichOneof("response") == "response_range" and op.response_range.kvs:
            return _kv(op.response_range.kvs[0])
    return None


class _Backoff:
    """Exponential backoff with jitter for re-creating watch streams."""

    def __init__(self) -> None:
        self._delay = _WATCH_BACKOFF_INITIAL

    def reset(self) -> None:
        self._delay = _WATCH_BACKOFF_INITIAL

    def next(self) -> float:
        delay = self._delay * (0.5 + random.random() / 2)
        self._delay = min(self._delay * 2, _WATCH_BACKOFF_MAX)
        return delay


class Etcd3Storage:
    """`Storage` on one etcd endpoint; build it with `await Etcd3Storage.connect([...])`."""

    def __init__(self, client: EtcdChannel, *, endpoint: str, timeout: float) -> None:
        self._client = client
        self._kv_stub: Any = client.kvstub
        self._watch_stub: Any = rpc.WatchStub(client.channel)
        self._metadata: Any = client.metadata
        self._watch_metadata: tuple[tuple[str, str], ...] = (*(client.metadata or ()), ("hasleader", "true"))
        self._timeout = timeout
        self._closed = False
        self._calls: set[Any] = set()
        self.endpoint = endpoint

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    async def connect(cls, endpoints: builtins.list[str], *, timeout: float = 5.0,
                      startup_timeout: float | None = None, tls: EtcdTLSConfig | None = None) -> Etcd3Storage:
        """Connect to the first endpoint that answers, retrying the list until `startup_timeout`.

        Each attempt waits at most a second, so one endpoint that hangs (a name that does not
        resolve yet, a peer still starting) does not use up the whole wait. `timeout` is the
        per-request deadline of the storage afterwards; `startup_timeout` defaults to it.
        https endpoints are dialled over TLS with `tls` (see `etcd_channel`); a refused
        handshake counts as an endpoint that does not answer.
        Raises Unavailable when none answered in time, ValueError for a malformed endpoint and
        OSError when a TLS file cannot be read.
        """
        if not endpoints:
            raise ValueError("no etcd endpoints given")
        parsed = [parse_endpoint(ep) for ep in endpoints]
        # Each API server starts at a random member, so one hung member stalls few of them.
        start = random.randrange(len(parsed))
        combined = cluster_endpoint(parsed[start:] + parsed[:start])
        if combined is not None:
            parsed = [combined]
        wait = timeout if startup_timeout is None else startup_timeout
        deadline = time.monotonic() + wait
        errors: dict[str, str] = {}
        while True:
            for endpoint in parsed:
                remaining = deadline - time.monotonic()
                client = EtcdChannel(endpoint, tls=tls, options=_CHANNEL_OPTIONS)
                try:
                    await client.kvstub.Range(rpc.RangeRequest(key=b"\0", count_only=True),
                                              timeout=min(max(remaining, 0.2), 1.0), metadata=client.metadata)
                except Exception as e:  # noqa: BLE001 - any failure means "try the next one"
                    errors[endpoint.url] = str(_translate(e))
                    await client.close()
                    continue
                except BaseException:
                    await asyncio.shield(client.close())
                    raise
                logger.info("connected to etcd at %s", endpoint.url)
                return cls(client, endpoint=endpoint.url, timeout=timeout)
            if time.monotonic() >= deadline:
                raise Unavailable(f"no etcd endpoint reachable within {wait:g}s: {errors}")
            await asyncio.sleep(0.2)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for call in builtins.list(self._calls):
            call.cancel()
        self._calls.clear()
        try:
            await self._client.close()
        except Exception:
            logger.debug("error closing the etcd client", exc_info=True)

    async def healthy(self) -> bool:
        if self._closed:
            return False
        try:
            await self._kv_stub.Range(rpc.RangeRequest(key=b"\0", count_only=True),
                                      timeout=min(_HEALTH_TIMEOUT, self._timeout), metadata=self._metadata)
            return True
        except Exception as e:  # noqa: BLE001 - health checks report, they do not raise
            logger.debug("etcd health check failed: %s", e)
            return False

    # -- plumbing ----------------------------------------------------------------------------

    async def _unary(self, method: str, request: Any, *, revision: int = 0, what: str = "") -> Any:
        """Call one KV RPC with the deadline, translating failures."""
        if self._closed:
            raise StorageError("storage is closed")
        try:
            return await getattr(self._kv_stub, method)(request, timeout=self._timeout, metadata=self._metadata)
        except asyncio.CancelledError:
            if self._closed and not _being_cancelled():  # close() cancelled the call under us
                raise StorageError("storage is closed") from None
            raise
        except Exception as e:
            raise _translate(e, revision=revision, what=what) from e

    async def _txn(self, compare: builtins.list[Any], success: builtins.list[Any], failure: builtins.list[Any],
                   *, what: str) -> Any:
        return await self._unary("Txn", rpc.TxnRequest(compare=compare, success=success, failure=failure),
                                 what=what)

    async def _compacted_revision(self) -> int:
        """Best effort: the store's compaction revision (0 when it cannot be found out).

        etcd has no RPC for it, but a watch from revision 1 is refused with the compaction
        revision in its response; the watch is on a key nothing uses and is cancelled at once.
        """
        call = self._watch_stub.Watch(metadata=self._metadata)
        try:
            async def probe() -> int:
                await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
                    key=b"\0", start_revision=1)))
                for _ in range(2):
                    resp = await call.read()
                    if resp is grpc.aio.EOF:
                        break
                    if resp.compact_revision:
                        return int(resp.compact_revision)
                return 0
            return await asyncio.wait_for(probe(), min(self._timeout, 2.0))
        except Exception:  # noqa: BLE001 - best effort
            return 0
        finally:
            call.cancel()

    # -- reads -------------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue:
        resp = await self._unary("Range", rpc.RangeRequest(key=_encode(key)), what=f"get {key}")
        if not resp.kvs:
            raise KeyNotFound(key)
        return _kv(resp.kvs[0])

    async def list(self, prefix: str, *, revision: int = 0, limit: int = 0,
                   start_key: str | None = None) -> ListResult:
        if revision < 0 or limit < 0:
            raise ValueError("revision and limit must not be negative")
        key, range_end = _prefix_range(prefix)
        if start_key is not None:
            if not start_key.startswith(prefix):
                raise ValueError(f"start_key {start_key!r} is outside prefix {prefix!r}")
            key = _encode(start_key) or key
        req = rpc.RangeRequest(key=key, range_end=range_end, revision=revision, limit=limit)
        try:
            resp = await self._unary("Range", req, revision=revision, what=f"list {prefix}")
        except Compacted as e:
            raise Compacted(revision, await self._compacted_revision()) from e.__cause__
        items = [_kv(kv) for kv in resp.kvs]
        return ListResult(items=items, revision=revision or int(resp.header.revision), more=bool(resp.more),
                          count=int(resp.count))

    async def count(self, prefix: str) -> int:
        key, range_end = _prefix_range(prefix)
        resp = await self._unary("Range", rpc.RangeRequest(key=key, range_end=range_end, count_only=True),
                                 what=f"count {prefix}")
        return int(resp.count)

    async def current_revision(self) -> int:
        resp = await self._unary("Range", rpc.RangeRequest(key=b"\0", count_only=True), what="revision")
        return int(resp.header.revision)

    # -- writes ------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> int:
        k = _encode(key)
        resp = await self._txn([_cmp(k, "CREATE", "EQUAL", 0)], [_txn_put(k, value)], [],
                               what=f"create {key}")
        if not resp.succeeded:
            raise KeyExists(key)
        return int(resp.header.revision)

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> int:
        k = _encode(key)
        # version > 0 keeps a missing key (whose mod revision reads as 0) from matching.
        resp = await self._txn([_cmp(k, "VERSION", "GREATER", 0), _cmp(k, "MOD", "EQUAL", expected_revision)],
                               [_txn_put(k, value)], [_txn_get(k)], what=f"update {key}")
        if resp.succeeded:
            return int(resp.header.revision)
        current = _failure_kv(resp)
        if current is None:
            raise KeyNotFound(key)
        raise RevisionConflict(key, current)

    async def guaranteed_update(self, key: str, try_update: Callable[[KeyValue], Awaitable[bytes | None]],
                                *, max_retries: int = 16) -> KeyValue:
        current = await self.get(key)
        for attempt in range(max_retries + 1):
            new_value = await try_update(current)
            if new_value is None:
                return current
            try:
                revision = await self.update(key, new_value, expected_revision=current.mod_revision)
            except RevisionConflict as conflict:
                if conflict.current is None or attempt == max_retries:
                    raise
                logger.debug("guaranteed_update %s: conflict at revision %d, retrying", key,
                             conflict.current.mod_revision)
                current = conflict.current
                continue
            return KeyValue(key=key, value=new_value, mod_revision=revision,
                            create_revision=current.create_revision)
        raise AssertionError("unreachable")  # pragma: no cover

    async def delete(self, key: str, *, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        k = _encode(key)
        compare = [_cmp(k, "VERSION", "GREATER", 0)]
        if expected_revision is not None:
            compare.append(_cmp(k, "MOD", "EQUAL", expected_revision))
        resp = await self._txn(compare, [_txn_delete(k)], [_txn_get(k)], what=f"delete {key}")
        if not resp.succeeded:
            current = _failure_kv(resp)
            if current is None:
                raise KeyNotFound(key)
            raise RevisionConflict(key, current)
        deleted = resp.responses[0].response_delete_range
        if not deleted.prev_kvs:  # raced with another delete inside the same revision: impossible
            raise KeyNotFound(key)
        return _kv(deleted.prev_kvs[0]), int(resp.header.revision)

    async def compact(self, revision: int) -> None:
        try:
            await self._unary("Compact", rpc.CompactionRequest(revision=revision), revision=revision,
                              what=f"compact {revision}")
        except Compacted:
            logger.debug("compact %d: already compacted that far", revision)

    # -- watch -------------------------------------------------------------------------------

    async def watch(self, prefix: str, *, after_revision: int) -> AsyncGenerator[WatchEvent, None]:
        # An async generator (a subtype of the protocol's AsyncIterator) so callers can aclose() it.
        key, range_end = _prefix_range(prefix)
        next_rev = after_revision + 1  # the first revision not yet delivered
        backoff = _Backoff()
        failures = 0  # consecutive broken streams, to keep a long outage from flooding the log
        call: Any = None
        try:
            while not self._closed:
                stream_start = next_rev
                created_at = 0.0
                call = self._watch_stub.Watch(metadata=self._watch_metadata)
                self._calls.add(call)
                try:
                    watch_id = await asyncio.wait_for(
                        self._create_watch(call, key, range_end, stream_start), self._timeout)
                    created_at = time.monotonic()
                    if failures:
                        logger.info("watch %s resumed at revision %d", prefix, stream_start)
                        failures = 0
                    while True:
                        resp = await self._read(call)
                        if resp.compact_revision:
                            raise Compacted(next_rev, int(resp.compact_revision))
                        if resp.canceled:
                            raise _StreamBroken(f"etcd cancelled the watch: {resp.cancel_reason or 'no reason'}")
                        if resp.watch_id != watch_id:
                            continue  # an answer to a progress request, or a stray
                        if not resp.events:
                            if resp.created:
                                continue
                            progress = int(resp.header.revision)
                            if progress + 1 > next_rev:
                                next_rev = progress + 1
                            yield WatchEvent(type="PROGRESS", key="", value=None, prev_value=None,
                                             revision=progress)
                            continue
                        for ev in resp.events:
                            event = _watch_event(ev)
                            if event.revision < stream_start:
                                continue  # defensive: never repeat what an earlier stream delivered
                            next_rev = max(next_rev, event.revision + 1)
                            yield event
                except (TimeoutError, _StreamBroken, grpc.aio.AioRpcError, asyncio.CancelledError) as e:
                    if isinstance(e, asyncio.CancelledError) and _being_cancelled():
                        raise
                    if self._closed:
                        return
                    if created_at and time.monotonic() - created_at >= _WATCH_STABLE_AFTER:
                        backoff.reset()
                    delay = backoff.next()
                    failures += 1
                    logger.log(logging.WARNING if failures == 1 or failures % 30 == 0 else logging.DEBUG,
                               "watch %s broken (%s, %d in a row); re-creating from revision %d in %.2fs",
                               prefix, _describe(e), failures, next_rev, delay)
                finally:
                    call.cancel()
                    self._calls.discard(call)
                    call = None
                await asyncio.sleep(delay)
        finally:
            if call is not None:
                call.cancel()
                self._calls.discard(call)

    async def _create_watch(self, call: Any, key: bytes, range_end: bytes, start_revision: int) -> int:
        """Open the watch on a fresh stream; return its watch id. Raises Compacted."""
        await call.write(rpc.WatchRequest(create_request=rpc.WatchCreateRequest(
            key=key, range_end=range_end, start_revision=start_revision, prev_kv=True, progress_notify=True)))
        while True:
            resp = await self._read(call)
            if resp.compact_revision:
                raise Compacted(start_revision, int(resp.compact_revision))
            if not resp.created:
                continue
            if resp.canceled:
                # Refused at creation for a reason other than compaction (say, permissions):
                # retrying would not help, so the consumer hears about it.
                raise StorageError(f"etcd refused the watch: {resp.cancel_reason or 'no reason'}")
            return int(resp.watch_id)

    @staticmethod
    async def _read(call: Any) -> Any:
        resp = await call.read()
        if resp is grpc.aio.EOF:
            raise _StreamBroken("etcd closed the watch stream")
        return resp


def _watch_event(ev: Any) -> WatchEvent:
    kv = ev.kv
    prev = bytes(ev.prev_kv.value) if ev.HasField("prev_kv") else None
    if ev.type == _EVENT_DELETE:
        return WatchEvent(type="DELETED", key=_decode(kv.key), value=prev, prev_value=prev,
                          revision=int(kv.mod_revision))
    added = kv.create_revision == kv.mod_revision
    return WatchEvent(type="ADDED" if added else "MODIFIED", key=_decode(kv.key), value=bytes(kv.value),
                      prev_value=None if added else prev, revision=int(kv.mod_revision))


def _being_cancelled() -> bool:
    """True when the running task itself is being cancelled (not just a gRPC call under it)."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


def _describe(exc: BaseException) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.code().name}: {exc.details()}"
    if isinstance(exc, asyncio.TimeoutError):
        return "no answer in time"
    if isinstance(exc, asyncio.CancelledError):
        return "stream cancelled"
    return str(exc)
