"""Output: the server's Tables as kubectl prints them, and -o yaml/json/name."""

from __future__ import annotations

import json
from typing import Any

import yaml

from kube.resources import ResourceInfo

__all__ = ["print_table", "print_objects", "resource_ref"]


def resource_ref(info: ResourceInfo) -> str:
    """`deployment.apps` / `pod`: how kubectl names a kind in `<ref>/<name> created`."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "<none>"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def print_table(tables: list[tuple[ResourceInfo, dict[str, Any]]], *, wide: bool, with_namespace: bool,
                with_kind: bool, no_headers: bool = False) -> str:
    """Rows of one or more Tables, aligned in columns three spaces apart, as kubectl does."""
    out: list[str] = []
    for info, table in tables:
        cols = [c for c in table.get("columnDefinitions") or [] if wide or not c.get("priority")]
        idx = [i for i, c in enumerate(table.get("columnDefinitions") or []) if wide or not c.get("priority")]
        header = [c["name"].upper() for c in cols]
        rows: list[list[str]] = []
        for row in table.get("rows") or []:
            cells = [_cell(row["cells"][i]) if i < len(row["cells"]) else "" for i in idx]
            meta = (row.get("object") or {}).get("metadata") or {}
            if with_kind and cells:
                cells[0] = f"{resource_ref(info)}/{cells[0]}"
            if with_namespace:
                cells.insert(0, str(meta.get("namespace", "")))
            rows.append(cells)
        if with_namespace:
            header.insert(0, "NAMESPACE")
        grid = rows if no_headers else [header, *rows]
        widths = [max(len(r[i]) for r in grid) for i in range(len(header))]
        if out and not no_headers:
            out.append("")
        for r in grid:
            out.append("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())
    return "\n".join(out) + ("\n" if out else "")


def print_objects(objects: list[dict[str, Any]], output: str, *, as_list: bool) -> str:
    if output == "name":
        return "".join(f"{o['__ref']}/{o['metadata']['name']}\n" for o in objects)
    clean = [{k: v for k, v in o.items() if k != "__ref"} for o in objects]
    doc: Any = {"apiVersion": "v1", "kind": "List", "items": clean, "metadata": {"resourceVersion": ""}} \
        if as_list else clean[0]
    if output == "json":
        return json.dumps(doc, indent=4) + "\n"
    return str(yaml.safe_dump(doc, default_flow_style=False, sort_keys=True))
