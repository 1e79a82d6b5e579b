"""Expectations: what a controller is still waiting to see from its own writes.

Mirrors pkg/controller.ControllerExpectations and UIDTrackingControllerExpectations
(controller_utils.go). Before creating n pods for a ReplicaSet the controller records "expect
n adds"; each pod-add event for that ReplicaSet lowers it by one. Before deleting pods it
records their keys; a delete event (or the deletionTimestamp showing up) for one of those
keys lowers "expected deletes" once, however many events that pod produces. While anything
is still expected, the informer cache is known to lag the controller's own writes, so the
controller must not act on pod counts (it would create or delete twice); it only refreshes
status. Guarantees:
- a key with no record is satisfied (a fresh process trusts its freshly listed cache);
- a record is satisfied once every expected add and delete was observed, or once it is
  older than the TTL (5 minutes), so a lost event delays a sync but never blocks it;
- setting expectations replaces the previous record for the key.
Not thread-safe; it lives on one event loop like the informers that feed it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from kube.clock import Clock, RealClock

__all__ = ["EXPECTATIONS_TTL", "ControllerExpectations"]

logger = logging.getLogger(__name__)

EXPECTATIONS_TTL = 5 * 60.0


@dataclass
class _Expectee:
    adds: int
    deletes: int
    timestamp: float
    deleting: set[str] = field(default_factory=set)

    def fulfilled(self) -> bool:
        return self.adds <= 0 and self.deletes <= 0


class ControllerExpectations:
    """Expected adds and deletes per controller key, with deletes tracked by pod key."""

    def __init__(self, *, clock: Clock | None = None, ttl: float = EXPECTATIONS_TTL) -> None:
        self._clock = clock or RealClock()
        self._ttl = ttl
        self._records: dict[str, _Expectee] = {}

    def satisfied(self, key: str) -> bool:
        """True when the controller may act on its cache for `key`."""
        record = self._records.get(key)
        if record is None or record.fulfilled():
            return True
        if self._clock.now() - record.timestamp > self._ttl:
            logger.info("Expectations expired", extra={"key": key, "adds": record.adds, "deletes": record.deletes})
            return True
        return False

    def time_until_expired(self, key: str) -> float | None:
        """Seconds until an unmet record expires; None when there is nothing pending."""
        record = self._records.get(key)
        if record is None or record.fulfilled():
            return None
        return max(0.0, record.timestamp + self._ttl - self._clock.now())

    def expect_creations(self, key: str, adds: int) -> None:
        self._records[key] = _Expectee(adds=adds, deletes=0, timestamp=self._clock.now())

    def expect_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        keys = set(pod_keys)
        self._records[key] = _Expectee(adds=0, deletes=len(keys), timestamp=self._clock.now(), deleting=keys)

    def creation_observed(self, key: str) -> None:
        """One pod add was seen (or one planned create will never happen)."""
        record = self._records.get(key)
        if record is not None:
            record.adds -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        """`pod_key` was seen going away; counts once per expected pod, ignores others."""
        record = self._records.get(key)
        if record is not None and pod_key in record.deleting:
            record.deleting.discard(pod_key)
            record.deletes -= 1

    def expire_within(self, key: str, seconds: float) -> None:
        """Let an unmet record for `key` lapse after at most `seconds` (for writes of unknown outcome)."""
        record = self._records.get(key)
        if record is not None:
            record.timestamp = min(record.timestamp, self._clock.now() + seconds - self._ttl)

    def delete_expectations(self, key: str) -> None:
        self._records.pop(key, None)

    def pending(self, key: str) -> tuple[int, int]:
        """(adds, deletes) still expected for `key`; (0, 0) when there is no record."""
        record = self._records.get(key)
        return (record.adds, record.deletes) if record is not None else (0, 0)
