"""`picokube status`: what runs for a data dir, from `state.json` checked against /proc.

The JSON form is a stable interface for scripts:

    {"apiserver": "https://127.0.0.1:6443", "ui": "https://127.0.0.1:6443/ui/", "etcd": [...],
     "kubeconfig": "/abs/path/kubeconfig", "containerd_socket": null,
     "components": [{"name": "etcd", "pid": 123, "alive": true, ...}, ...],
     "supervisor": {"pid": 100, "alive": true}, ...}

`alive` is true while the pid exists, is not a zombie and still runs the recorded argv; a
stopped (SIGSTOP) process is alive, with `"process_state": "stopped"`. A kubelet's name
contains its node name (`kubelet-node-1`).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from picokube.state import process_matches, process_state, read_state

__all__ = ["collect_status", "render_text", "status"]

logger = logging.getLogger(__name__)

_STATES = {"R": "running", "S": "sleeping", "D": "disk-sleep", "T": "stopped", "t": "stopped",
           "Z": "zombie", "I": "idle"}


def collect_status(data_dir: Path) -> dict[str, Any] | None:
    """The status document for `data_dir`, or None when it holds no cluster state."""
    state = read_state(data_dir)
    if state is None:
        return None
    sup = state.get("supervisor") or {}
    return {
        "apiserver": state.get("apiserver"),
        "ui": f"{str(state['apiserver']).rstrip('/')}/ui/" if state.get("apiserver") else None,
        "etcd": list(state.get("etcd") or []),
        "kubeconfig": state.get("kubeconfig"),
        "containerd_socket": state.get("containerd_socket"),
        "components": [_component(c) for c in state.get("components") or []],
        "supervisor": {"pid": sup.get("pid"), "alive": process_matches(sup.get("pid"), sup.get("argv") or [])},
        "data_dir": str(data_dir),
        "runtime": state.get("runtime"),
        "nodes": list(state.get("nodes") or []),
    }


def _component(rec: dict[str, Any]) -> dict[str, Any]:
    pid = rec.get("pid")
    alive = process_matches(pid, rec.get("argv") or [])
    letter = process_state(pid) if alive and isinstance(pid, int) else None
    return {
        "name": rec.get("name"),
        "pid": pid,
        "alive": alive,
        "process_state": _STATES.get(letter or "", letter) if alive else "gone",
        "restarts": rec.get("restarts", 0),
        "last_exit": rec.get("last_exit"),
        "log": rec.get("log"),
    }


def render_text(doc: dict[str, Any]) -> str:
    """A small human table of `doc` (as returned by `collect_status`)."""
    sup = doc["supervisor"]
    lines = [
        f"API server:  {doc['apiserver']}",
        f"browser:     {doc.get('ui') or '-'} (sign in with the kubeconfig's token, or add ?token=...)",
        f"etcd:        {', '.join(doc['etcd'])}",
        f"kubeconfig:  {doc['kubeconfig']}",
        f"supervisor:  pid {sup['pid']} ({'alive' if sup['alive'] else 'not running'})",
        "",
    ]
    rows = [("NAME", "PID", "ALIVE", "STATE", "RESTARTS", "LAST EXIT")]
    rows += [(c["name"], str(c["pid"] or "-"), "yes" if c["alive"] else "no", c["process_state"],
              str(c["restarts"]), c["last_exit"] or "-") for c in doc["components"]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def status(data_dir: Path, *, output: str = "text") -> int:
    """The `status` command; exit code 1 when the data dir holds no cluster state."""
    doc = collect_status(data_dir)
    if doc is None:
        print(f"No picokube cluster state in {data_dir} (start one with `picokube up`)", file=sys.stderr)
        return 1
    print(json.dumps(doc, indent=2) if output == "json" else render_text(doc))
    return 0
