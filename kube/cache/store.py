"""A thread-unsafe, event-loop-local indexed store of objects keyed by `namespace/name`.

Mirrors client-go tools/cache.Indexer: a map of key -> object plus named indexes
(`index_name -> index_value -> keys`) kept in step on every add, update and delete, so a
reconcile can ask "pods on node-1" or "pods owned by uid X" without scanning.
Objects handed out are the stored instances: treat them as read-only (copy before mutating).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from kube.api.base import KubeObject

__all__ = ["IndexFunc", "Store", "meta_namespace_key", "namespace_index"]

T = TypeVar("T", bound=KubeObject)
IndexFunc = Callable[[T], list[str]]


def meta_namespace_key(obj: KubeObject) -> str:
    return obj.key


def namespace_index(obj: KubeObject) -> list[str]:
    ns = getattr(obj, "metadata").namespace  # noqa: B009 - each kind declares metadata, KubeObject does not
    return [ns] if ns else []


class Store(Generic[T]):
    """An indexed cache of one kind."""

    def __init__(self, indexers: dict[str, IndexFunc[T]] | None = None) -> None:
        self._items: dict[str, T] = {}
        self._indexers: dict[str, IndexFunc[T]] = {"namespace": namespace_index, **(indexers or {})}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    def add_indexers(self, indexers: dict[str, IndexFunc[T]]) -> None:
        """Add indexes (also after objects were stored: existing objects are indexed now)."""
        for name, fn in indexers.items():
            if name in self._indexers:
                continue
            self._indexers[name] = fn
            self._indices[name] = {}
            for key, obj in self._items.items():
                for value in fn(obj):
                    self._indices[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: T) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _index(self, key: str, obj: T) -> None:
        for name, fn in self._indexers.items():
            for value in fn(obj):
                self._indices[name].setdefault(value, set()).add(key)

    def upsert(self, obj: T) -> T | None:
        """Store obj; return the previous object under its key, if any."""
        key = obj.key
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        self._index(key, obj)
        return old

    def delete(self, key: str) -> T | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def replace(self, objs: Iterable[T]) -> dict[str, T]:
        """Swap the whole content; return the previous content by key."""
        old = self._items
        self._items = {}
        self._indices = {name: {} for name in self._indexers}
        for obj in objs:
            self.upsert(obj)
        return old

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str | None, name: str) -> T | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> list[T]:
        return list(self._items.values())

    def keys(self) -> builtins.list[str]:
        return list(self._items)

    def by_index(self, index_name: str, value: str) -> builtins.list[T]:
        keys = self._indices[index_name].get(value, ())
        return [self._items[k] for k in keys]

    def __len__(self) -> int:
        return len(self._items)
