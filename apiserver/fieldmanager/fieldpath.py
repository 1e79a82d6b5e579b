"""Field sets: which leaf fields of an object a manager owns, in the `fieldsV1` vocabulary.

A path is a tuple of elements, as structured-merge-diff spells them:
`f:<name>` a map or struct field, `k:<json of key fields>` an item of a list keyed by
`x-kubernetes-list-map-keys`, `v:<json value>` an item of a set, and `.` the item itself.
Atomic lists and scalars are leaves. `field_set(obj, node)` lists an object's leaf paths
using the kind's schema; `to_fields_v1` / `from_fields_v1` convert sets to and from the
nested `fieldsV1` form stored in `metadata.managedFields`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from apiserver.openapi.schema import SchemaNode

__all__ = ["Path", "field_set", "to_fields_v1", "from_fields_v1", "get_at", "remove_at", "IGNORED_METADATA"]

Path = tuple[str, ...]

# Server-owned or identity fields no manager owns.
IGNORED_METADATA = frozenset({"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation",
                              "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "name", "namespace"})
_IGNORED_TOP = frozenset({"apiVersion", "kind", "status"})


def _key_elem(item: dict[str, Any], keys: list[str]) -> str:
    return "k:" + json.dumps({k: item[k] for k in keys if k in item}, separators=(",", ":"))


def _walk(value: Any, node: SchemaNode, prefix: Path, list_info: tuple[str, list[str]] | None) -> Iterator[Path]:
    if isinstance(value, list) and list_info is not None:
        kind, keys = list_info
        if kind == "map" and keys and all(isinstance(v, dict) for v in value):
            item_node = node.items()
            for item in value:
                elem = (*prefix, _key_elem(item, keys))
                yield (*elem, ".")
                yield from _walk_map(item, item_node, elem)
            return
        if kind == "set":
            for item in value:
                yield (*prefix, "v:" + json.dumps(item, separators=(",", ":")))
            return
        yield prefix
        return
    if isinstance(value, dict) and value:
        yield from _walk_map(value, node, prefix)
        return
    yield prefix


def _walk_map(value: dict[str, Any], node: SchemaNode, prefix: Path) -> Iterator[Path]:
    for key, child in value.items():
        child_node = node.field(key)
        info = node.list_type(key) if isinstance(child, list) else None
        yield from _walk(child, child_node, (*prefix, f"f:{key}"), info)


def field_set(obj: dict[str, Any], node: SchemaNode, *, include_status: bool = False) -> set[Path]:
    """Every leaf path of `obj` a manager can own (server fields and, by default, status excluded)."""
    paths: set[Path] = set()
    for key, value in obj.items():
        if key in _IGNORED_TOP and not (include_status and key == "status"):
            continue
        if key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in IGNORED_METADATA}
            if not value:
                continue
        info = node.list_type(key) if isinstance(value, list) else None
        paths.update(_walk(value, node.field(key), (f"f:{key}",), info))
    return paths


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for elem in path:
            node = node.setdefault(elem, {})
    return root


def from_fields_v1(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    for elem, sub in tree.items():
        here = (*prefix, elem)
        if isinstance(sub, dict) and sub:
            paths |= from_fields_v1(sub, here)
        else:
            paths.add(here)
    return paths


_MISSING = object()


def _step(container: Any, elem: str) -> Any:
    if elem.startswith("f:") and isinstance(container, dict):
        return container.get(elem[2:], _MISSING)
    if elem.startswith("k:") and isinstance(container, list):
        want = json.loads(elem[2:])
        for item in container:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in want.items()):
                return item
        return _MISSING
    if elem.startswith("v:") and isinstance(container, list):
        value = json.loads(elem[2:])
        return value if value in container else _MISSING
    return _MISSING


def get_at(obj: Any, path: Path) -> Any:
    """The value at a path, or the module's _MISSING sentinel (compare with `is_missing`)."""
    node = obj
    for elem in path:
        if elem == ".":
            return node
        node = _step(node, elem)
        if node is _MISSING:
            return _MISSING
    return node


def is_missing(value: Any) -> bool:
    return value is _MISSING


def remove_at(obj: Any, path: Path) -> None:
    """Remove the field, list item or set value a path names, if present."""
    if not path:
        return
    if path[-1] == ".":
        path = path[:-1]
    parent = get_at(obj, path[:-1]) if len(path) > 1 else obj
    if parent is _MISSING:
        return
    last = path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(parent, list):
        item = _step(parent, last)
        if item is not _MISSING:
            parent.remove(item)
    elif last.startswith("v:") and isinstance(parent, list):
        value = json.loads(last[2:])
        if value in parent:
            parent.remove(value)
