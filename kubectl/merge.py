"""Client-side apply's three-way JSON merge patch, as kubectl computes it.

`original` is the last applied configuration (the annotation), `modified` is the new
manifest, `current` is the live object. The patch sets what `modified` says where `current`
differs, and deletes (null) what `original` had and `modified` dropped; fields only the
server or other writers set are left alone. Lists are replaced whole.
"""

from __future__ import annotations

from typing import Any

__all__ = ["three_way_merge_patch"]


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
        elif live != value:
            patch[key] = value
    for key in original:
        if key not in modified and key in current:
            patch[key] = None
    return patch
