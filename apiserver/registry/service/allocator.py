"""A range allocation persisted in etcd: which members of a range are taken, as one bitmap.

Mirrors upstream's RangeAllocation objects (`/registry/ranges/serviceips`,
`/registry/ranges/servicenodeports`) behind ipallocator/portallocator. The value is a small
JSON object with the range it describes and the bitmap (bit i set: offset i taken), written
only by the API server with a compare-and-swap on its revision, so two API servers can never
hand out the same member: whoever loses the swap re-reads and chooses again. Callers take
members before they write the object that holds them and give them back only after that
object is gone or no longer holds them, so a crash in between can leak a member (the repair
pass reclaims it) but never hand it out twice. Safe to use concurrently from one process.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from apiserver.storage import errors as serr
from apiserver.storage.interface import KeyValue, Storage
from kube.errors import ServiceUnavailable

__all__ = ["AlreadyAllocated", "Bitmap", "RangeAllocator", "RangeFull"]


class AlreadyAllocated(Exception):
    """The member asked for by value is taken."""


class RangeFull(Exception):
    """No member is free."""


@dataclass
class Bitmap:
    """The taken members of a range of `size`, as an integer's bits."""

    size: int
    bits: int = 0

    def has(self, offset: int) -> bool:
        return bool(self.bits >> offset & 1)

    def take(self, offset: int) -> None:
        self.bits |= 1 << offset

    def give_back(self, offset: int) -> None:
        self.bits &= ~(1 << offset)

    def members(self) -> set[int]:
        text = bin(self.bits)[:1:-1]  # least significant bit first
        return {i for i, bit in enumerate(text) if bit == "1"}

    def free_in(self, low: int, high: int) -> int | None:
        """A random free offset in [low, high), or None."""
        span = high - low
        if span <= 0:
            return None
        start = random.randrange(span)
        for step in range(span):
            offset = low + (start + step) % span
            if not self.has(offset):
                return offset
        return None


class RangeAllocator:
    """One range's allocation bitmap at `key`; `range_text` names the range it was made for."""

    def __init__(self, storage: Storage, key: str, *, range_text: str, size: int, lower_band: int) -> None:
        self.storage, self.key, self.range_text = storage, key, range_text
        self.size, self.lower_band = size, lower_band

    def _decode(self, kv: KeyValue | None) -> Bitmap:
        if kv is None:
            return Bitmap(self.size)
        doc = json.loads(kv.value)
        if doc.get("range") != self.range_text:
            return Bitmap(self.size)  # the range changed: the repair pass re-marks what Services hold
        bits = int.from_bytes(base64.b64decode(doc.get("data") or ""), "little")
        return Bitmap(self.size, bits & ((1 << self.size) - 1))

    def _encode(self, bitmap: Bitmap) -> bytes:
        data = bitmap.bits.to_bytes((self.size + 7) // 8, "little")
        return json.dumps({"kind": "RangeAllocation", "apiVersion": "v1", "range": self.range_text,
                           "data": base64.b64encode(data).decode()}, separators=(",", ":")).encode()

    async def snapshot(self) -> Bitmap:
        try:
            return self._decode(await self.storage.get(self.key))
        except serr.KeyNotFound:
            return Bitmap(self.size)
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e

    async def change(self, mutate: Callable[[Bitmap], None]) -> Bitmap:
        """Apply `mutate` to the current bitmap and store it with a compare-and-swap, retried on a race."""
        while True:
            try:
                kv: KeyValue | None = await self.storage.get(self.key)
            except serr.KeyNotFound:
                kv = None
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            bitmap = self._decode(kv)
            before = bitmap.bits
            mutate(bitmap)
            if bitmap.bits == before and kv is not None:
                return bitmap
            try:
                if kv is None:
                    await self.storage.create(self.key, self._encode(bitmap))
                else:
                    await self.storage.update(self.key, self._encode(bitmap), expected_revision=kv.mod_revision)
                return bitmap
            except (serr.KeyExists, serr.RevisionConflict):
                continue
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e

    async def allocate(self, offset: int, *, dry_run: bool = False) -> None:
        """Take `offset`; AlreadyAllocated when it is taken."""
        def take(bitmap: Bitmap) -> None:
            if bitmap.has(offset):
                raise AlreadyAllocated(offset)
            bitmap.take(offset)
        if dry_run:
            take(await self.snapshot())
            return
        await self.change(take)

    async def allocate_next(self, *, dry_run: bool = False) -> int:
        """Take a free offset, from the upper band first; RangeFull when there is none."""
        chosen: list[int] = []

        def take(bitmap: Bitmap) -> None:
            offset = bitmap.free_in(self.lower_band, self.size)
            if offset is None:
                offset = bitmap.free_in(0, self.lower_band)
            if offset is None:
                raise RangeFull()
            bitmap.take(offset)
            chosen[:] = [offset]
        if dry_run:
            take(await self.snapshot())
        else:
            await self.change(take)
        return chosen[0]

    async def release(self, offsets: Iterable[int]) -> None:
        wanted = [o for o in offsets if 0 <= o < self.size]
        if not wanted:
            return

        def give_back(bitmap: Bitmap) -> None:
            for offset in wanted:
                bitmap.give_back(offset)
        await self.change(give_back)
