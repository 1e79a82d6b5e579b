"""`picokube down`: stop every process `picokube up` started for a data dir, and nothing else.

First the supervisor gets SIGTERM (and SIGCONT, should it be stopped); it stops its
components in reverse start order and exits. Then every pid recorded in `state.json` that
still runs its recorded argv is stopped directly (SIGTERM + SIGCONT to its process group,
SIGKILL after a grace period). This covers a supervisor that was SIGKILLed or hangs; then,
on CRI nodes, the proxies' iptables rules are removed (`python -m proxy --cleanup`), which
a supervisor that stops normally has already done.
A pid whose command line no longer matches is someone else's process now and is never
signalled. `state.json` is removed at the end; files (PKI, tokens, etcd data) are kept.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from picokube.state import (
    is_locked,
    process_matches,
    read_state,
    remove_state,
    stop_process,
)

__all__ = ["down", "stop_cluster"]

logger = logging.getLogger(__name__)

COMPONENT_GRACE = 5.0


def stop_cluster(data_dir: Path) -> int:
    """Stop the supervisor and every recorded component of `data_dir`; how many were running."""
    state = _wait_for_state(data_dir)
    if state is None:
        return 0
    records = list(state.get("components") or [])
    running = sum(process_matches(r.get("pid"), r.get("argv") or []) for r in records)
    sup = state.get("supervisor") or {}
    sup_pid, sup_argv = sup.get("pid"), sup.get("argv") or []
    if process_matches(sup_pid, sup_argv):
        running += 1
        # The supervisor needs up to COMPONENT_GRACE per component to stop them in order.
        grace = COMPONENT_GRACE * (len(records) + 1) + 5.0
        stop_process(sup_pid, sup_argv, grace=grace, group=False)
    later = read_state(data_dir)  # still there if the supervisor died without cleaning up
    if later is not None:
        records += list(later.get("components") or [])
    for rec in records:
        pid, argv = rec.get("pid"), rec.get("argv") or []
        if process_matches(pid, argv):
            logger.info("Stopping leftover %s pid=%s", rec.get("name"), pid)
            stop_process(pid, argv, grace=COMPONENT_GRACE)
    if state.get("runtime") == "cri" and any(str(r.get("name", "")).startswith("kube-proxy-") for r in records):
        from picokube.up import cleanup_proxy_rules  # picokube.up imports this module

        cleanup_proxy_rules()
    remove_state(data_dir)
    return running


def down(data_dir: Path) -> int:
    """The `down` command: stop the cluster, report, and return the exit code (0)."""
    stopped = stop_cluster(data_dir)
    if stopped:
        print(f"Stopped picokube for {data_dir} ({stopped} process{'es' if stopped != 1 else ''})")
    else:
        print(f"nothing running for {data_dir}")
    return 0


def _wait_for_state(data_dir: Path, timeout: float = 3.0) -> dict[str, Any] | None:
    """state.json; a supervisor that holds the lock but has not written it yet gets `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        state = read_state(data_dir)
        if state is not None or not is_locked(data_dir) or time.monotonic() >= deadline:
            if state is None and is_locked(data_dir):
                logger.warning("A process holds %s's lock but wrote no state.json", data_dir)
            return state
        time.sleep(0.1)

