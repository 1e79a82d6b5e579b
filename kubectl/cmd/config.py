"""`pkctl config view|get-contexts|current-context|use-context|set-context`, on the kubeconfig file.

The file is the one kubectl would use: `--kubeconfig`, else the first file of
`$KUBECONFIG`, else `~/.kube/config`. `view` hides secrets as kubectl does
(`DATA+OMITTED`, `REDACTED`) unless `--raw`; `--minify` keeps only the current context.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from kube.client.config import resolve_kubeconfig_path
from kubectl.context import CommandError, emit, state

__all__ = ["config_app"]

config_app = typer.Typer(no_args_is_help=True, help="Modify and view kubeconfig files.")
_SECRET_DATA = ("certificate-authority-data", "client-certificate-data", "client-key-data")


def _path() -> Path:
    return resolve_kubeconfig_path(state.ctx.kubeconfig)


def _load() -> dict[str, Any]:
    path = _path()
    try:
        return dict(yaml.safe_load(path.read_text()) or {})
    except FileNotFoundError:
        return {"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [], "users": [],
                "current-context": "", "preferences": {}}
    except (OSError, yaml.YAMLError) as e:
        raise CommandError(f"cannot read kubeconfig {path}: {e}") from None


def _save(doc: dict[str, Any]) -> None:
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(doc, sort_keys=False))
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def _current(doc: dict[str, Any]) -> str:
    return state.ctx.context_name or str(doc.get("current-context") or "")


@config_app.command("view")
def view(
    raw: Annotated[bool, typer.Option("--raw", help="Show certificates and tokens.")] = False,
    minify: Annotated[bool, typer.Option("--minify", help="Only what the current context uses.")] = False,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml or json.")] = "yaml",
) -> None:
    """Display merged kubeconfig settings."""
    doc = copy.deepcopy(_load())
    if minify:
        name = _current(doc)
        ctx = next((c for c in doc.get("contexts") or [] if c.get("name") == name), None)
        if ctx is None:
            raise CommandError('current-context must exist in order to minify')
        inner = ctx.get("context") or {}
        doc["contexts"] = [ctx]
        doc["clusters"] = [c for c in doc.get("clusters") or [] if c.get("name") == inner.get("cluster")]
        doc["users"] = [u for u in doc.get("users") or [] if u.get("name") == inner.get("user")]
        doc["current-context"] = name
    if not raw:
        for entry in [*(c.get("cluster") or {} for c in doc.get("clusters") or []),
                      *(u.get("user") or {} for u in doc.get("users") or [])]:
            for key in _SECRET_DATA:
                if key in entry:
                    entry[key] = "DATA+OMITTED"
            if "token" in entry:
                entry["token"] = "REDACTED"
    if output == "json":

        emit(json.dumps(doc, indent=4) + "\n")
    else:
        emit(yaml.safe_dump(doc, sort_keys=False))


@config_app.command("get-contexts")
def get_contexts(
    name: Annotated[str | None, typer.Argument(help="Only this context.")] = None,
    output: Annotated[str | None, typer.Option("-o", "--output", help="name")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers")] = False,
) -> None:
    """Describe one or many contexts."""
    doc = _load()
    current = _current(doc)
    contexts = [c for c in doc.get("contexts") or [] if name is None or c.get("name") == name]
    if name is not None and not contexts:
        raise CommandError(f'context {name} not found')
    if output == "name":
        emit("".join(f"{c.get('name')}\n" for c in contexts))
        return
    rows = [["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]] if not no_headers else []
    for c in contexts:
        inner = c.get("context") or {}
        rows.append(["*" if c.get("name") == current else "", str(c.get("name", "")), str(inner.get("cluster", "")),
                     str(inner.get("user", "")), str(inner.get("namespace", ""))])
    if rows:
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        emit("".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() + "\n" for r in rows))


@config_app.command("current-context")
def current_context() -> None:
    """Display the current context."""
    name = _current(_load())
    if not name:
        raise CommandError("current-context is not set")
    emit(name + "\n")


@config_app.command("use-context")
def use_context(name: Annotated[str, typer.Argument(help="The context to switch to.")]) -> None:
    """Set the current context in the kubeconfig file."""
    doc = _load()
    if not any(c.get("name") == name for c in doc.get("contexts") or []):
        raise CommandError(f'no context exists with the name: "{name}"')
    doc["current-context"] = name
    _save(doc)
    emit(f'Switched to context "{name}".\n')


@config_app.command("set-context")
def set_context(
    name: Annotated[str | None, typer.Argument(help="The context to change.")] = None,
    current: Annotated[bool, typer.Option("--current", help="Change the current context.")] = False,
    namespace: Annotated[str | None, typer.Option("--namespace", help="Its default namespace.")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster")] = None,
    user: Annotated[str | None, typer.Option("--user")] = None,
) -> None:
    """Set a context entry (its namespace, cluster or user) in the kubeconfig file."""
    doc = _load()
    target = _current(doc) if current else name
    if not target:
        raise CommandError("you must specify a non-empty context name or --current")
    contexts = doc.setdefault("contexts", [])
    entry = next((c for c in contexts if c.get("name") == target), None)
    created = entry is None
    if entry is None:
        entry = {"name": target, "context": {}}
        contexts.append(entry)
    inner = entry.setdefault("context", {})
    for key, value in (("namespace", namespace), ("cluster", cluster), ("user", user)):
        if value is not None:
            inner[key] = value
    _save(doc)
    emit(f'Context "{target}" {"created" if created else "modified"}.\n')
