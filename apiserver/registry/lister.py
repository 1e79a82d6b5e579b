"""Read-only listers over the watch caches, for admission and authorization.

Mirrors client-go's listers as kube-apiserver's admission plugins and authorizers use them:
a lookup served from memory, never an etcd round trip. The objects returned are the
cache's own: callers must not change them (copy first). While the cache is not yet filled,
or with the watch cache turned off, a lister answers None and empty lists; callers that
must be exact read through the registry instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from apiserver.registry.generic import RegistryStore

__all__ = ["CacheLister", "ObjectLister"]

Obj = dict[str, Any]
Objects = list[Obj]  # spelled once outside CacheLister, whose `list` method hides the builtin there


class ObjectLister(Protocol):
    """What authorizers and admission plugins read: lookups by name and walks over a namespace."""

    def get(self, namespace: str | None, name: str) -> Obj | None: ...

    def iter(self, namespace: str | None = None) -> Iterator[Obj]: ...


class CacheLister:
    """Lookups on one resource's watch cache."""

    def __init__(self, store: RegistryStore) -> None:
        self._store = store

    def get(self, namespace: str | None, name: str) -> Obj | None:
        cache = self._store.cache
        return cache.get(self._store.key(namespace, name)) if cache is not None else None

    def iter(self, namespace: str | None = None) -> Iterator[Obj]:
        """Every cached object (of one namespace when given), in no particular order."""
        cache = self._store.cache
        if cache is None:
            return iter(())
        return cache.iter_objects(self._store.prefix(namespace))

    def list(self, namespace: str | None = None, predicate: Callable[[Obj], bool] | None = None) -> list[Obj]:
        return [o for o in self.iter(namespace) if predicate is None or predicate(o)]

    def add_index(self, name: str, value_of: Callable[[Obj], str | None]) -> None:
        """Have the cache group its objects by `value_of` (see `by_index`); nothing without a cache."""
        cache = self._store.cache
        if cache is not None:
            cache.add_index(name, value_of)

    def by_index(self, name: str, value: str) -> Objects:
        """The cached objects that index `name` groups under `value`, without walking the others."""
        cache = self._store.cache
        return cache.by_index(name, value) if cache is not None else []
