"""Client-side apply's three-way JSON merge patch, as kubectl computes it.

`original` is the last applied configuration (the annotation), `modified` is the new
manifest, `current` is the live object. The patch sets what `modified` says where `current`
differs, and deletes (null) what `original` had and `modified` dropped; fields only the
server or other writers set are left alone. A list is sent whole, and only when it differs
from the live one in something the manifest says: a live list whose items carry extra
fields the server defaulted (a container's imagePullPolicy, say) still counts as unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = ["three_way_merge_patch"]


def _contains(live: Any, wanted: Any) -> bool:
    """Whether `live` says everything `wanted` says (dicts may hold more keys; lists pair up)."""
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(k in live and _contains(live[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(live, list) and len(live) == len(wanted) and all(
            _contains(a, b) for a, b in zip(live, wanted, strict=True))
    return bool(live == wanted)


def three_way_merge_patch(original: dict[str, Any] | None, modified: dict[str, Any],
                          current: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    original = original or {}
    for key, value in modified.items():
        live = current.get(key)
        if isinstance(value, dict) and isinstance(live, dict):
            sub = three_way_merge_patch(original.get(key) if isinstance(original.get(key), dict) else None,
                                        value, live)
            if sub:
                patch[key] = sub
        elif not _contains(live, value) or (value is None) != (live is None):
            patch[key] = value
    for key in original:
        if key not in modified and key in current:
            patch[key] = None
    return patch
