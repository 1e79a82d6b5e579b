"""Services: the proxy's sync time at scale, and how soon a Ready pod receives traffic through its Service.

Two parts, each next to its floor measured in the same run (see bench/README.md):
- `bench._proxy_sync`: one proxy programming `--services` selector-less Services of
  `--endpoints` endpoints each, against a private etcd and API server: the time from the
  last write to everything programmed, and one sync at that size, next to a bare
  `iptables-restore` of the same rules (simulated: next to rendering them);
- `bench._ready_traffic`: on real containers (`picokube up --runtime cri`, one node),
  `--trials` pods each turning Ready behind a Service with no other endpoint: p50/p99 of
  the time from Ready to the first connection through the cluster IP that reaches the pod,
  next to the same pod reached on its pod IP.

As root, this process first moves into a private network namespace (`bench._netns`), so
the proxies program iptables and the CRI node builds its bridge there, never on the host;
the proxy then runs in iptables mode where the iptables tools work. Without root the first
part runs simulated and the second is skipped, with the reason among the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._netns import enter_private_netns
from bench._proxy_sync import measure_proxy_sync
from bench._ready_traffic import measure_ready_to_traffic
from kube.testing.etcd import EtcdProcess
from picokube.containerd import containerd_available
from proxy.iptables.runner import iptables_available


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--services", type=int, default=1000, help="Services the proxy programs")
    p.add_argument("--endpoints", type=int, default=10, help="ready endpoints per Service")
    p.add_argument("--syncs", type=int, default=3,
                   help="single-endpoint changes timed at full size, and bare restores of the floor")
    p.add_argument("--proxy-mode", choices=["auto", "iptables", "simulated"], default="auto",
                   help="auto: iptables when root in a private network namespace with iptables, else simulated")
    p.add_argument("--trials", type=int, default=20, help="pods turned Ready in the traffic part (0: skip it)")
    p.add_argument("--ready-after", type=float, default=1.0,
                   help="seconds from a pod's container start to its readiness file")


def _proxy_mode(requested: str, private: str | None) -> tuple[str, str | None]:
    """The mode part one runs in, and why not iptables when it cannot be."""
    problem = f"no private network namespace: {private}" if private else iptables_available()
    if requested == "iptables" and problem:
        raise SystemExit(f"--proxy-mode iptables: {problem}")
    return ("simulated", problem) if requested == "simulated" or problem else ("iptables", None)


def _traffic_problem(opts: argparse.Namespace, private: str | None) -> str | None:
    if opts.trials <= 0:
        return "--trials 0"
    if private:
        return f"no private network namespace: {private}"
    return containerd_available() or iptables_available()


def run(opts: argparse.Namespace) -> dict[str, Any]:
    private = enter_private_netns()
    mode, why = _proxy_mode(opts.proxy_mode, private)
    if why:
        print(f"proxy sync: simulated ({why})", file=sys.stderr)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        etcd = EtcdProcess(data_dir=Path(tmp) / "etcd").start()
        try:
            figures |= measure_proxy_sync(Path(tmp), etcd.endpoint, mode=mode, services=opts.services,
                                          endpoints=opts.endpoints, rounds=opts.syncs)
        finally:
            etcd.stop()
    problem = _traffic_problem(opts, private)
    if problem:
        print(f"ready to traffic: skipped ({problem})", file=sys.stderr)
        return figures | {"traffic_runtime": f"skipped: {problem}"}
    return figures | measure_ready_to_traffic(trials=opts.trials, ready_after=opts.ready_after)
