"""The proxy's report of what it programmed: served at /status and written to `--status-file`.

    {"mode": "iptables", "nodeName": "node-1", "programming": true,
     "lastSync": "2026-...Z", "healthy": true,
     "summary": {"servicePorts": 2, "endpoints": 3, "natRules": 21, "filterRules": 4},
     "servicePorts": [{"name": "default/web:http", "protocol": "TCP", "clusterIP": "10.96.0.10",
                       "port": 80, "nodePort": 30080, "endpoints": ["10.88.1.5:8080"]}, ...]}

`programming` is false while another proxy of the same network namespace programs it (the
report then shows what this one would program). The file is replaced atomically, so a
reader sees one whole report or the previous one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kube.timeutil import format_micro_time
from proxy.backend import Programmed

__all__ = ["status_document", "write_status_file"]


def status_document(*, mode: str, node_name: str, programmed: Programmed, last_sync: float | None,
                    healthy: bool) -> dict[str, Any]:
    """The report for one proxy (pure)."""
    model, rules = programmed.model, programmed.rules
    return {
        "mode": mode,
        "nodeName": node_name,
        "programming": programmed.programming,
        "lastSync": format_micro_time(last_sync) if last_sync is not None else None,
        "healthy": healthy,
        "summary": {"servicePorts": len(model.service_ports),
                    "endpoints": sum(len(sp.endpoints) for sp in model.service_ports),
                    "natRules": rules.nat_rules if rules else 0, "filterRules": rules.filter_rules if rules else 0},
        **model.to_dict(),
    }


def write_status_file(path: Path, document: dict[str, Any]) -> None:
    """Replace `path` with `document` as JSON, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(document, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
