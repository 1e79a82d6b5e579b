"""A `Storage` that encrypts the values of chosen resources on their way to etcd.

Upstream applies a value transformer per resource inside its etcd3 store; here the same
happens one layer out, so `Etcd3Storage` stays a plain byte store and every caller (the
registries, the watch cache) keeps speaking the `Storage` protocol unchanged. A key is
transformed by the transformer of the longest configured prefix it falls under; other keys
pass through untouched.

Guarantees:

* every value written under a covered prefix is transformed (encrypted by the first
  provider) before it leaves this layer, with the etcd key as authenticated data;
* every value read (get, list, watch, a conflict's current value, a delete's last value)
  is the data originally written, marked `stale` when an old key (not the first provider's)
  opened it, or the read raises `TransformFailed` naming the key:
  a value that cannot be decrypted is never handed up as if it were data;
* a list with undecryptable values raises `TransformFailed` carrying the rest of the list
  (`partial`), as upstream's list fails on the first such key; a watch event that cannot be
  decrypted ends the watch with `TransformFailed` (the consumer relists, as after any
  broken watch).
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace

from .errors import RevisionConflict, TransformFailed
from .interface import KeyValue, ListResult, Storage, WatchEvent
from .transformer import PrefixTransformer, TransformError

__all__ = ["TransformingStorage"]

logger = logging.getLogger(__name__)


class TransformingStorage:
    """`Storage` over `inner` with `transformers` applied per key prefix."""

    def __init__(self, inner: Storage, transformers: Sequence[tuple[str, PrefixTransformer]]) -> None:
        self.inner = inner
        # Longest prefix first, so a more specific prefix wins.
        self._transformers = sorted(transformers, key=lambda pt: len(pt[0]), reverse=True)

    def _for(self, key: str) -> PrefixTransformer | None:
        return next((t for prefix, t in self._transformers if key.startswith(prefix)), None)

    def _write(self, key: str, data: bytes) -> bytes:
        transformer = self._for(key)
        if transformer is None:
            return data
        try:
            return transformer.transform_to_storage(data, key)
        except TransformError as e:
            raise TransformFailed(key, str(e)) from e

    def _read(self, key: str, value: bytes) -> tuple[bytes, bool]:
        transformer = self._for(key)
        if transformer is None:
            return value, False
        try:
            return transformer.read(value, key)
        except TransformError as e:
            raise TransformFailed(key, str(e)) from e

    def _read_kv(self, kv: KeyValue) -> KeyValue:
        value, stale = self._read(kv.key, kv.value)
        return replace(kv, value=value, stale=stale)

    # -- reads -------------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue:
        return self._read_kv(await self.inner.get(key))

    async def list(self, prefix: str, *, revision: int = 0, limit: int = 0,
                   start_key: str | None = None) -> ListResult:
        res = await self.inner.list(prefix, revision=revision, limit=limit, start_key=start_key)
        items: builtins.list[KeyValue] = []
        failures: builtins.list[TransformFailed] = []
        for kv in res.items:
            try:
                items.append(self._read_kv(kv))
            except TransformFailed as e:
                failures.append(e)
        result = replace(res, items=items)
        if failures:
            first = failures[0]
            raise TransformFailed(first.key, first.reason, partial=result,
                                  failed_keys=tuple(f.key for f in failures))
        return result

    async def count(self, prefix: str) -> int:
        return await self.inner.count(prefix)

    async def current_revision(self) -> int:
        return await self.inner.current_revision()

    # -- writes ------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> int:
        return await self.inner.create(key, self._write(key, value))

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> int:
        try:
            return await self.inner.update(key, self._write(key, value), expected_revision=expected_revision)
        except RevisionConflict as conflict:
            current = conflict.current
            raise RevisionConflict(key, None if current is None else self._read_kv(current)) from None

    async def guaranteed_update(self, key: str, try_update: Callable[[KeyValue], Awaitable[bytes | None]],
                                *, max_retries: int = 16) -> KeyValue:
        async def transformed(current: KeyValue) -> bytes | None:
            data = await try_update(self._read_kv(current))
            return None if data is None else self._write(key, data)

        written = await self.inner.guaranteed_update(key, transformed, max_retries=max_retries)
        return self._read_kv(written)

    async def delete(self, key: str, *, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        try:
            deleted, revision = await self.inner.delete(key, expected_revision=expected_revision)
        except RevisionConflict as conflict:
            current = conflict.current
            raise RevisionConflict(key, None if current is None else self._read_kv(current)) from None
        return self._read_kv(deleted), revision

    # -- watch and the rest ------------------------------------------------------------------

    async def watch(self, prefix: str, *, after_revision: int) -> AsyncGenerator[WatchEvent, None]:
        events = self.inner.watch(prefix, after_revision=after_revision)
        try:
            async for ev in events:
                if ev.key and self._for(ev.key) is not None:
                    ev = replace(ev, value=None if ev.value is None else self._read(ev.key, ev.value)[0],
                                 prev_value=None if ev.prev_value is None else self._read(ev.key, ev.prev_value)[0])
                yield ev
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    async def compact(self, revision: int) -> None:
        await self.inner.compact(revision)

    async def healthy(self) -> bool:
        return await self.inner.healthy()

    async def close(self) -> None:
        await self.inner.close()
