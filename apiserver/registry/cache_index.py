"""A watch cache index: the current objects grouped by one value of theirs, as the cacher's indexers.

Why: the Node authorizer asks for "the pods bound to node X" on a kubelet's every read of a
ConfigMap, Secret or claim and every token it requests; walking every pod for that costs
time in proportion to the whole cluster, on the API server's one event loop.
Guarantee: after each change the watch cache applies, and after each relist, `get(value)`
holds exactly the current objects for which `value_of` answers `value` (None: in no group).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["CacheIndex"]

Obj = dict[str, Any]


class CacheIndex:
    """Keys grouped by `value_of(obj)`; kept in step by the watch cache that owns it."""

    def __init__(self, value_of: Callable[[Obj], str | None]) -> None:
        self.value_of = value_of
        self._groups: dict[str, dict[str, Obj]] = {}
        self._value_of_key: dict[str, str] = {}

    def rebuild(self, objects: Mapping[str, Obj]) -> None:
        self._groups.clear()
        self._value_of_key.clear()
        for key, obj in objects.items():
            self.put(key, obj)

    def put(self, key: str, obj: Obj) -> None:
        """`obj` is now the object under `key`."""
        self.remove(key)
        value = self.value_of(obj)
        if value is not None:
            self._groups.setdefault(value, {})[key] = obj
            self._value_of_key[key] = value

    def remove(self, key: str) -> None:
        """Nothing is under `key` any more."""
        value = self._value_of_key.pop(key, None)
        if value is not None:
            group = self._groups[value]
            del group[key]
            if not group:
                del self._groups[value]

    def get(self, value: str) -> list[Obj]:
        """The current objects in the group `value`, in no particular order (the cache's own: do not change them)."""
        group = self._groups.get(value)
        return list(group.values()) if group else []
