"""Missing list-map keys of an applied configuration, filled in with their defaults.

An item of a list keyed by `x-kubernetes-list-map-keys` is identified by all its key fields,
and a key field may be optional when upstream defaults it (a container port's `protocol`
is keyed but defaults to TCP). structured-merge-diff identifies such an item by the
defaulted key, so applying `{containerPort: 80}` twice names the same live port
`{containerPort: 80, protocol: TCP}` instead of appending a second one. The defaults come
from the kind's own defaulting (`apiserver.registry.defaults`), so there is one source of
truth for what a missing field means. Only key fields are filled: the applier does not come
to own the other defaulted fields.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.openapi.schema import SchemaNode
from apiserver.registry.defaults import apply_defaults

__all__ = ["fill_list_map_keys"]

Obj = dict[str, Any]


def fill_list_map_keys(applied: Obj, node: SchemaNode) -> Obj:
    """A copy of `applied` whose list-map items carry every key field the kind defaults."""
    out = copy.deepcopy(applied)
    defaulted = copy.deepcopy(applied)
    apply_defaults(str(applied.get("kind") or ""), defaulted)
    _fill_map(out, defaulted, node)
    return out


def _fill_map(value: Obj, defaulted: Any, node: SchemaNode) -> None:
    if not isinstance(defaulted, dict):
        return
    for key, child in value.items():
        if isinstance(child, dict):
            _fill_map(child, defaulted.get(key), node.field(key))
        elif isinstance(child, list):
            kind, keys = node.list_type(key)
            _fill_list(child, defaulted.get(key), node.field(key), keys if kind == "map" else [])


def _fill_list(items: list[Any], defaulted: Any, node: SchemaNode, keys: list[str]) -> None:
    # Defaulting adds fields but never adds, drops or reorders items, so indexes line up.
    if not isinstance(defaulted, list) or len(defaulted) != len(items):
        return
    item_node = node.items()
    for item, default_item in zip(items, defaulted, strict=True):
        if not isinstance(item, dict) or not isinstance(default_item, dict):
            continue
        for k in keys:
            if k not in item and k in default_item:
                item[k] = copy.deepcopy(default_item[k])
        _fill_map(item, default_item, item_node)
