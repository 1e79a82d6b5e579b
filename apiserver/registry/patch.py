"""The three PATCH flavours Kubernetes accepts, as pure functions on JSON values.

- JSON merge patch (RFC 7386): maps merge recursively, `null` deletes, lists replace.
- JSON patch (RFC 6902): add, remove, replace, move, copy, test on JSON pointers.
- Strategic merge patch: like merge patch, but lists of objects with a merge key (containers
  by `name`, ports by `containerPort`, ...) merge element by element, and the directives
  `$patch` (replace / delete / merge), `$setElementOrder/<list>`, `$retainKeys` and
  `$deleteFromPrimitiveList/<list>` are honoured.

All raise PatchError (a 4xx to the caller) on a malformed patch; inputs are never mutated.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PatchError", "JsonPatchFailed", "merge_patch", "json_patch", "strategic_merge_patch", "MERGE_KEYS"]


class PatchError(ValueError):
    """The patch cannot be applied to the document."""


class JsonPatchFailed(PatchError):
    """A well-formed JSON patch whose operations do not apply (a failed `test`, a missing path):
    upstream answers these 422, and only a patch that is not a list of objects 400."""


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --- JSON patch ---------------------------------------------------------------------------
def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"path {path!r} not found")
    return node


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(f"path {path!r} not found")


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    parent = _parent(doc, parts, path)
    last = parts[-1] if parts else ""
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError(f"unable to remove nonexistent key: {path!r}")


def _add(doc: Any, path: str, value: Any, *, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace operation does not apply: doc is missing key: {path}")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise PatchError(f"index out of range in {path!r}")
    else:
        raise PatchError(f"path {path!r} not found")
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """Apply RFC 6902 `operations`; PatchError when they are not a list of objects, JsonPatchFailed
    when one does not apply."""
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        try:
            doc = _apply_operation(doc, op)
        except JsonPatchFailed:
            raise
        except PatchError as e:
            raise JsonPatchFailed(str(e)) from None
    return doc


def _apply_operation(doc: Any, op: dict[str, Any]) -> Any:
    """One operation on `doc` (changed in place where it can be); PatchError when it does not apply."""
    if "op" not in op or "path" not in op:
        raise PatchError(f"invalid JSON patch operation: {op!r}")
    kind, path = op["op"], op["path"]
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"operation {kind!r} needs a value")
    if kind == "add":
        doc = _add(doc, path, copy.deepcopy(op["value"]))
    elif kind == "remove":
        _remove(doc, path)
    elif kind == "replace":
        doc = _add(doc, path, copy.deepcopy(op["value"]), replace=True)
    elif kind in ("move", "copy"):
        if "from" not in op:
            raise PatchError(f"operation {kind!r} needs from")
        value = _remove(doc, op["from"]) if kind == "move" else copy.deepcopy(_get(doc, op["from"]))
        doc = _add(doc, path, value)
    elif kind == "test":
        if _get(doc, path) != op["value"]:
            raise PatchError(f"testing value {path} failed")
    else:
        raise PatchError(f"unknown JSON patch operation {kind!r}")
    return doc


# --- strategic merge patch ----------------------------------------------------------------
# Merge keys by field name, as the Kubernetes types declare them (x-kubernetes-patch-merge-key).
MERGE_KEYS: dict[str, str] = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "ports": "containerPort", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "volumes": "name",
    "imagePullSecrets": "name", "conditions": "type", "ownerReferences": "uid", "addresses": "type",
    "taints": "key", "hostAliases": "ip", "containerStatuses": "name", "initContainerStatuses": "name",
    "topologySpreadConstraints": "topologyKey", "resourceClaims": "name", "podIPs": "ip", "hostIPs": "ip",
}
# Primitive lists whose patch strategy is merge (union), not replace.
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


def _list_strategy(node: Any, field: str) -> tuple[str, str | None]:
    """(strategy, merge key) for a list field, from the schema when there is one."""
    if node is not None and getattr(node, "known", False):
        strategy, key = node.patch_strategy(field)
        return ("merge" if "merge" in strategy else "replace"), key
    if field in MERGE_KEYS:
        return "merge", MERGE_KEYS[field]
    return ("merge" if field in MERGE_PRIMITIVE_LISTS else "replace"), None


def _merge_list(field: str, original: list[Any], patch: list[Any], order: list[Any] | None, node: Any) -> list[Any]:
    strategy, key = _list_strategy(node, field)
    item_node = node.field(field).items() if node is not None else None
    if strategy != "merge":
        return [p for p in copy.deepcopy(patch) if not (isinstance(p, dict) and "$patch" in p)]
    if key is None or not all(isinstance(p, dict) for p in patch):
        merged = original + [p for p in patch if p not in original]
        if order:
            rank = {v: i for i, v in enumerate(order) if not isinstance(v, (dict, list))}
            merged.sort(key=lambda v: rank.get(v, len(rank)) if not isinstance(v, (dict, list)) else len(rank))
        return merged
    if any(p.get("$patch") == "replace" for p in patch):
        return [p for p in copy.deepcopy(patch) if p.get("$patch") != "replace"]
    result = [copy.deepcopy(o) for o in original]
    for item in patch:
        directive = item.get("$patch")
        if key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {key}")
        idx = next((i for i, o in enumerate(result) if isinstance(o, dict) and o.get(key) == item[key]), None)
        if directive == "delete":
            if idx is not None:
                result.pop(idx)
            continue
        body = {k: v for k, v in item.items() if k != "$patch"}
        if idx is None:
            result.append(strategic_merge_patch({}, body, item_node))
        else:
            result[idx] = strategic_merge_patch(result[idx], body, item_node)
    if order:
        rank = {(o.get(key) if isinstance(o, dict) else o): i for i, o in enumerate(order)}
        result.sort(key=lambda o: rank.get(o.get(key) if isinstance(o, dict) else o, len(rank)))
    return result


def strategic_merge_patch(original: Any, patch: Any, node: Any = None) -> Any:
    """Apply a strategic merge patch; `node` (a SchemaNode) supplies merge keys and strategies."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(original, dict):
        original = {}
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return {}
    result = copy.deepcopy(original)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = strategic_merge_patch(result.get(key), value, node.field(key) if node is not None else None)
        elif isinstance(value, list):
            current = result.get(key)
            order = patch.get(f"$setElementOrder/{key}")
            result[key] = _merge_list(key, current if isinstance(current, list) else [], value, order, node)
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result
