"""managedFields: recording who owns which fields, and server-side apply.

Every write records its manager (`?fieldManager=`, else the User-Agent's product token) in
`metadata.managedFields`, as Kubernetes does:
- an Update (create, PUT, PATCH) gives the manager every field it set or changed and takes
  those fields away from the other managers;
- an Apply (`application/apply-patch+yaml`) declares the manager's whole intent: the object
  becomes the live object merged with the applied configuration (list semantics from
  `x-kubernetes-list-type`), fields the manager applied before and dropped now are removed
  unless someone else owns them, and a field owned by another manager with a different value
  is a 409 Conflict unless `force=true`, which takes the field over. List items are keyed
  with their defaulted key fields (see `listkeys`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from apiserver.fieldmanager.fieldpath import Path, field_set, from_fields_v1, get_at, remove_at, to_fields_v1
from apiserver.fieldmanager.listkeys import fill_list_map_keys
from apiserver.openapi.schema import SchemaNode
from kube.errors import Conflict

__all__ = ["record_update", "apply_config", "manager_from_user_agent", "format_path"]

Obj = dict[str, Any]


@dataclass
class _Entry:
    manager: str
    operation: str
    api_version: str
    time: str
    subresource: str | None
    fields: set[Path] = field(default_factory=set)

    def to_wire(self) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version,
                    "time": self.time, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(self.fields)}
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def manager_from_user_agent(user_agent: str) -> str:
    """kube-apiserver's default manager name: the User-Agent up to the first '/'."""
    return (user_agent or "unknown").split("/", 1)[0][:128] or "unknown"


def _entries(obj: Obj | None) -> list[_Entry]:
    out = []
    for raw in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        if not isinstance(raw, dict) or not raw.get("manager"):
            continue
        fields = from_fields_v1(raw.get("fieldsV1") or {}) if isinstance(raw.get("fieldsV1"), dict) else set()
        out.append(_Entry(str(raw["manager"]), str(raw.get("operation") or "Update"), str(raw.get("apiVersion") or ""),
                          str(raw.get("time") or ""), raw.get("subresource"), fields))
    return out


def _store(obj: Obj, entries: list[_Entry]) -> None:
    kept = [e.to_wire() for e in entries if e.fields]
    if kept:
        obj["metadata"]["managedFields"] = kept
    else:
        obj["metadata"].pop("managedFields", None)


def _fields(obj: Obj, node: SchemaNode, subresource: str | None) -> set[Path]:
    if subresource == "status":
        return {p for p in field_set(obj, node, include_status=True) if p[0] == "f:status"}
    return field_set(obj, node)


def _mine(entries: list[_Entry], manager: str, operation: str, subresource: str | None, api_version: str,
          now: str) -> _Entry:
    for e in entries:
        if e.manager == manager and e.operation == operation and e.subresource == subresource:
            e.time, e.api_version = now, api_version
            return e
    e = _Entry(manager, operation, api_version, now, subresource)
    entries.append(e)
    return e


def record_update(old: Obj | None, new: Obj, *, manager: str, node: SchemaNode | None, api_version: str, now: str,
                  subresource: str | None = None) -> None:
    """Set `new`'s managedFields after an Update by `manager` (old is None for a create)."""
    if node is None:
        return
    entries = _entries(old)
    new_fields = _fields(new, node, subresource)
    old_fields = _fields(old, node, subresource) if old else set()
    changed = {p for p in new_fields if p not in old_fields or get_at(old, p) != get_at(new, p)}
    removed = old_fields - new_fields
    for e in entries:
        e.fields -= changed | removed
    if changed:
        _mine(entries, manager, "Update", subresource, api_version, now).fields |= changed
    _store(new, entries)


def format_path(path: Path) -> str:
    """`.spec.template.spec.containers[name="web"].image`, as Kubernetes prints conflicts."""
    out = ""
    for elem in path:
        if elem.startswith("f:"):
            out += "." + elem[2:]
        elif elem.startswith("k:"):
            keys = json.loads(elem[2:])
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif elem.startswith("v:"):
            out += f"[{elem[2:]}]"
    return out


def _merge(live: Any, applied: Any, node: SchemaNode, list_info: tuple[str, list[str]] | None) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict):
        result = copy.deepcopy(live)
        for key, value in applied.items():
            info = node.list_type(key) if isinstance(value, list) else None
            result[key] = _merge(live.get(key), value, node.field(key), info)
        return result
    if isinstance(live, list) and isinstance(applied, list) and list_info is not None:
        kind, keys = list_info
        if kind == "map" and keys:
            items = copy.deepcopy(live)
            for item in applied:
                if not isinstance(item, dict):
                    return copy.deepcopy(applied)
                idx = next((i for i, cur in enumerate(items) if isinstance(cur, dict)
                            and all(cur.get(k) == item.get(k) for k in keys)), None)
                if idx is None:
                    items.append(copy.deepcopy(item))
                else:
                    items[idx] = _merge(items[idx], item, node.items(), None)
            return items
        if kind == "set":
            return list(live) + [v for v in applied if v not in live]
    return copy.deepcopy(applied)


def apply_config(live: Obj | None, applied: Obj, *, manager: str, force: bool, node: SchemaNode, api_version: str,
                 now: str, qualified: str) -> Obj:
    """The object after `manager` applies `applied` to `live` (None: it does not exist yet).

    List items are matched by their keys with defaulted key fields filled in, so applying the
    same configuration again changes nothing.
    """
    applied = fill_list_map_keys(applied, node)
    entries = _entries(live)
    applied_fields = field_set(applied, node)
    conflicts: dict[str, list[Path]] = {}
    for e in entries:
        if e.manager == manager and e.operation == "Apply":
            continue
        for p in sorted(applied_fields & e.fields):
            if p[-1] != "." and get_at(live, p) != get_at(applied, p):
                conflicts.setdefault(e.manager, []).append(p)
    if conflicts and not force:
        n = sum(len(v) for v in conflicts.values())
        versions = {e.manager: e.api_version for e in entries}
        lines = [f'conflict with "{m}" using {versions.get(m) or api_version}: {format_path(p)}'
                 for m, ps in conflicts.items() for p in ps]
        name = (applied.get("metadata") or {}).get("name")
        causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}"', "field": format_path(p)}
                  for m, ps in conflicts.items() for p in ps]
        raise Conflict(f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + "\n".join(lines),
                       details={"name": name, "kind": qualified, "causes": causes})
    for e in entries:
        e.fields -= {p for ps in conflicts.values() for p in ps}
    merged: dict[str, Any] = _merge(live or {}, applied, node, None)
    mine = _mine(entries, manager, "Apply", None, api_version, now)
    others: set[Path] = set().union(*(e.fields for e in entries if e is not mine)) if len(entries) > 1 else set()
    for p in sorted(mine.fields - applied_fields - others, key=len, reverse=True):
        remove_at(merged, p)
    mine.fields = applied_fields
    merged.setdefault("metadata", {})
    _store(merged, entries)
    return merged
