"""Reading manifests: files, directories and stdin, YAML or JSON, with the line each object starts on.

Errors name the file and the line, in kubectl's words, and are raised before anything is
sent, so a bad file leaves nothing behind.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Manifest", "ManifestError", "read_manifests"]


class ManifestError(Exception):
    """A manifest cannot be used; the message is what pkctl prints after `error: `."""


@dataclass(frozen=True)
class Manifest:
    source: str
    line: int
    body: dict[str, Any]


def _files(path: str, recursive: bool) -> list[Path]:
    """The manifest files a path names: itself, a folder's files, or (-R) every file below it."""
    p = Path(path)
    if p.is_dir():
        found = p.rglob("*") if recursive else p.iterdir()
        return sorted(f for f in found if f.suffix in (".yaml", ".yml", ".json") and f.is_file())
    if not p.exists():
        raise ManifestError(f'the path "{path}" does not exist')
    return [p]


def _documents(text: str, source: str) -> list[Manifest]:
    out: list[Manifest] = []
    try:
        loader = yaml.SafeLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                line = node.start_mark.line + 1
                data = loader.construct_document(node)
                if data is None:
                    continue
                if not isinstance(data, dict):
                    raise ManifestError(f'error validating "{source}": line {line}: expected an object, '
                                        f"got {type(data).__name__}")
                items = data.get("items") if str(data.get("kind", "")).endswith("List") else None
                if isinstance(items, list):
                    out.extend(Manifest(source, line, i) for i in items if isinstance(i, dict))
                else:
                    out.append(Manifest(source, line, data))
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}" if mark else "unknown line"
        raise ManifestError(f'error parsing {source}: error converting YAML to JSON: yaml: {where}: '
                            f"{e.problem or e.context}") from None
    for m in out:
        json.dumps(m.body, default=str)  # timestamps and the like become strings on the wire
        if not m.body.get("apiVersion"):
            raise ManifestError(f'error validating "{source}": line {m.line}: error validating data: '
                                "apiVersion not set")
        if not m.body.get("kind"):
            raise ManifestError(f'error validating "{source}": line {m.line}: error validating data: kind not set')
        if not (m.body.get("metadata") or {}).get("name") and not (m.body.get("metadata") or {}).get("generateName"):
            raise ManifestError(f'error validating "{source}": line {m.line}: error validating data: '
                                "metadata.name not set")
    return out


def read_manifests(paths: list[str], *, recursive: bool = False) -> list[Manifest]:
    """Every object in `paths` (`-` is stdin), in order; ManifestError before any is returned."""
    out: list[Manifest] = []
    for path in paths:
        if path == "-":
            out.extend(_documents(sys.stdin.read(), "STDIN"))
            continue
        for f in _files(path, recursive):
            try:
                text = f.read_text()
            except (OSError, UnicodeDecodeError) as e:
                raise ManifestError(f"cannot read {f}: {e}") from None
            out.extend(_documents(text, str(f)))
    if not out:
        raise ManifestError("no objects passed to apply")
    return out
