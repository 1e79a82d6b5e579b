"""Remember which generation of each slice this controller last wrote, to tell a lagging cache
from someone else's change.

Mirrors k8s.io/endpointslice/util EndpointSliceTracker. Per Service (`namespace/name`, from
the slice's service-name label) it keeps slice uid -> generation written, or "deletion
expected":
- `stale(service, slices)`: the informer has not yet caught up with this controller's own
  writes (a slice older than written, one still present that was deleted, one written but
  not yet seen). Reconciling then would create duplicates, so the Service waits instead;
- `should_sync(slice)`: an event for a slice is someone else's change (or a slice not
  written by this process) and its Service must be looked at again;
- `handle_deletion(slice)`: a deletion this controller expected needs no new sync.
Used from the event loop only (handlers and reconciles), so it needs no lock.
"""

from __future__ import annotations

from kube.api import EndpointSlice

__all__ = ["EndpointSliceTracker"]

_DELETION_EXPECTED = -1


def _service_key(slice_: EndpointSlice) -> str:
    return f"{slice_.metadata.namespace}/{slice_.service_name or ''}"


def _generation(slice_: EndpointSlice) -> int:
    return slice_.metadata.generation or 0


class EndpointSliceTracker:
    def __init__(self) -> None:
        self._by_service: dict[str, dict[str, int]] = {}

    def has(self, slice_: EndpointSlice) -> bool:
        return (slice_.metadata.uid or "") in self._by_service.get(_service_key(slice_), {})

    def should_sync(self, slice_: EndpointSlice) -> bool:
        """True unless the slice is exactly (or older than) what this controller wrote."""
        written = self._by_service.get(_service_key(slice_), {}).get(slice_.metadata.uid or "")
        return written is None or _generation(slice_) > written

    def stale(self, service_key: str, slices: list[EndpointSlice]) -> bool:
        """True when the cached `slices` of a Service lag this controller's own writes."""
        written = self._by_service.get(service_key)
        if not written:
            return False
        seen: set[str] = set()
        for s in slices:
            uid = s.metadata.uid or ""
            seen.add(uid)
            generation = written.get(uid)
            if generation is not None and (generation == _DELETION_EXPECTED or generation > _generation(s)):
                return True
        return any(uid not in seen for uid, g in written.items() if g != _DELETION_EXPECTED)

    def update(self, slice_: EndpointSlice) -> None:
        """Record a slice as this controller just wrote it (the server's answer)."""
        self._by_service.setdefault(_service_key(slice_), {})[slice_.metadata.uid or ""] = _generation(slice_)

    def expect_deletion(self, slice_: EndpointSlice) -> None:
        self._by_service.setdefault(_service_key(slice_), {})[slice_.metadata.uid or ""] = _DELETION_EXPECTED

    def handle_deletion(self, slice_: EndpointSlice) -> bool:
        """Forget a deleted slice; True if this controller expected the deletion."""
        written = self._by_service.get(_service_key(slice_))
        if written is None:
            return False
        generation = written.pop(slice_.metadata.uid or "", None)
        if not written:
            del self._by_service[_service_key(slice_)]
        return generation == _DELETION_EXPECTED

    def delete_service(self, service_key: str) -> None:
        self._by_service.pop(service_key, None)
