"""`picokube up`: prepare a data dir and run a whole cluster under one supervisor.

The steps, each idempotent so a second `up` on the same data dir reuses what the first
made: refuse when a cluster already runs for the data dir, check the ports, create the PKI,
the token file and one kubeconfig per identity, save the resolved flags (`cluster.json`),
then supervise etcd, the API server, the controller-manager, the scheduler, one kubelet
per node, one proxy per node and the cluster DNS, in that order. etcd gates the API server (its client port must accept
connections) and the API server gates the rest (`/readyz` must answer 200).

The HA layout (`--etcd-members N`, `--apiservers N`): etcd members `etcd-0..` form one
cluster (the last one started gates the API servers), API servers `apiserver-0..` run on
the ports after `--port`, each gated by its own `/readyz`, and HAProxy (`apiserver-lb`,
`picokube.balancer`) listens on `--port` and gates the rest through itself.

Foreground (`up`): this process is the supervisor and streams one line per event; Ctrl-C
stops everything and exits 0. Detached (`up --detach`): the supervisor is re-executed as
`python -m picokube _supervise --data-dir DIR` in its own session, logging to
`logs/supervisor.log`; this process waits until the API server is ready and every node is
Ready, prints a summary and exits 0, or prints why not, stops the cluster and exits 1.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import logging
import os
import site
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import kube
from kube.client.config import load_kubeconfig
from kube.netutil import host_address
from picokube._files import make_private_dir
from picokube.balancer import HAPROXY_CONFIG_NAME, find_haproxy, haproxy_command
from picokube.bootstrap import ensure_join_objects
from picokube.config import SIMULATED_CLUSTER_CIDR, ClusterConfig
from picokube.containerd import containerd_available
from picokube.credentials import issue_credentials
from picokube.down import stop_cluster
from picokube.encryption import ENCRYPTION_CONFIG_NAME
from picokube.etcd import etcd_command, initial_cluster
from picokube.etcd_pki import EtcdPki, ensure_etcd_member
from picokube.pki import ClusterPki
from picokube.probe import ApiProbe, port_in_use, port_open
from picokube.state import (
    ClusterLocked,
    cluster_lock,
    process_matches,
    read_state,
)
from picokube.supervisor import ComponentSpec, Supervisor, describe_exit
from picokube.tokens import ADMIN_USER

__all__ = ["UpError", "cleanup_proxy_rules", "component_specs", "prepare", "resolve_runtime", "supervise",
           "up_detached", "up_foreground"]

logger = logging.getLogger(__name__)

SUPERVISOR_LOG = "supervisor.log"
CLUSTER_DOMAIN = "cluster.local"


class UpError(Exception):
    """`up` cannot go on; the message says why and what to do."""


def resolve_runtime(requested: str) -> tuple[str, str]:
    """The runtime to use for `--runtime requested` and the reason; UpError if unavailable."""
    if requested == "simulated":
        return "simulated", "requested with --runtime simulated"
    problem = containerd_available()
    if requested == "cri":
        if problem is not None:
            raise UpError(f"the cri runtime cannot run here: {problem}; use --runtime simulated")
        return "cri", "requested with --runtime cri"
    if requested == "auto":
        if problem is None:
            return "cri", "containerd, runc and the CNI plugins are installed"
        return "simulated", f"the cri runtime cannot run here ({problem})"
    raise UpError(f"unknown runtime {requested!r}: use auto, cri or simulated")


def preflight(config: ClusterConfig) -> None:
    """Raise UpError if leftovers of an earlier run are alive or a port is taken.

    A running supervisor is detected by the data dir's lock, which the caller holds.
    """
    state = read_state(config.data_dir) or {}
    leftovers = [f"{c.get('name')} (pid {c.get('pid')})" for c in state.get("components", [])
                 if process_matches(c.get("pid"), c.get("argv") or [])]
    if leftovers:
        raise UpError(f"processes of an earlier run for {config.data_dir} are still alive: "
                      f"{', '.join(leftovers)}; run `picokube down --data-dir {config.data_dir}`")
    ports = [("API server", config.port), *(("API server", p) for p in config.apiserver_ports().values())]
    for member in config.etcd_member_list():
        ports += [("etcd client", member.client_port), ("etcd peer", member.peer_port)]
    for what, port in ports:
        if port_in_use(port):
            raise UpError(f"port {port} ({what}) is already in use on 127.0.0.1; "
                          f"free it or choose another with --port/--etcd-port")


def prepare(config: ClusterConfig) -> dict[str, str]:
    """Create dirs, PKI, token file, kubeconfigs and cluster.json; return tokens by user."""
    for d in (config.data_dir, config.logs_dir, config.etcd_data_dir):
        make_private_dir(d)
    if config.load_balanced:
        try:
            find_haproxy()  # refuse before anything starts, naming the package to install
        except FileNotFoundError as e:
            raise UpError(str(e)) from None
    _, tokens = issue_credentials(config.data_dir, server=config.apiserver_url,
                                  nodes={node: ("127.0.0.1",) for node in config.node_names},
                                  service_cluster_ip_range=config.service_cluster_ip_range)
    for member in config.etcd_member_list():
        if member.pki_name is not None:
            ensure_etcd_member(EtcdPki(config.pki_dir), member.pki_name)
    config.save()
    return tokens


def component_specs(config: ClusterConfig) -> list[ComponentSpec]:
    """The supervised processes of the cluster, in start order, with their readiness gates."""
    env, cwd, pki = python_env(), config.data_dir, ClusterPki(config.pki_dir)

    def python(name: str, package: str, *args: str, ready: Callable[[], bool] | None = None) -> ComponentSpec:
        return ComponentSpec(name, (sys.executable, "-m", package, *args), ready=ready, env=env, cwd=cwd)

    readyz_probe = ApiProbe(config.apiserver_url, pki.ca_cert)  # lives as long as the supervisor
    tracing = ("--tracing", "true" if config.tracing else "false",
               *(("--otlp-endpoint", config.otlp_endpoint) if config.otlp_endpoint else ()))

    specs = etcd_specs(config)
    etcd_tls = tuple(arg for flag, path in zip(("--etcd-cafile", "--etcd-certfile", "--etcd-keyfile"),
                                               config.etcd_client_files(), strict=True)
                     if path for arg in (flag, path))
    for name, port in config.apiserver_ports().items():
        own_probe = ApiProbe(f"https://127.0.0.1:{port}", pki.ca_cert) if config.load_balanced else readyz_probe
        specs.append(python(
            name, "apiserver",
            "--etcd-endpoints", ",".join(config.etcd_urls), *etcd_tls, "--bind-address", "0.0.0.0",
            "--port", str(port), "--workers", str(config.apiserver_workers),
            # Behind the balancer the kubernetes Service's endpoints name the balancer's port.
            *(("--advertise-port", str(config.port)) if config.load_balanced else ()),
            "--tls-cert-file", str(pki.apiserver_cert), "--tls-private-key-file", str(pki.apiserver_key),
            "--client-ca-file", str(pki.ca_cert), "--token-auth-file", str(config.token_file),
            "--kubelet-client-certificate", str(config.pki_dir / "apiserver-kubelet-client.crt"),
            "--kubelet-client-key", str(config.pki_dir / "apiserver-kubelet-client.key"),
            "--service-account-signing-key-file", str(config.pki_dir / "sa.key"),
            "--authorization-mode", "Node,RBAC", "--enable-bootstrap-token-auth",
            "--audit-log-path", str(config.logs_dir / ("audit.log" if name == "apiserver" else f"audit-{name}.log")),
            "--trace-store-file", str(config.data_dir / "traces.jsonl"), *tracing,
            "--service-cluster-ip-range", config.service_cluster_ip_range,
            "--service-node-port-range", config.service_node_port_range,
            "--encryption-provider-config", str(config.data_dir / ENCRYPTION_CONFIG_NAME),
            ready=functools.partial(_ready, own_probe)))
    if config.load_balanced:
        argv = haproxy_command(config.data_dir / HAPROXY_CONFIG_NAME, port=config.port,
                               servers=config.apiserver_ports(), ca_file=pki.ca_cert)
        specs.append(ComponentSpec("apiserver-lb", tuple(argv), ready=functools.partial(_ready, readyz_probe), cwd=cwd))
    grace = config.node_monitor_grace_period
    # Every instance is a leader-election candidate (on by default, as upstream); the first of
    # each keeps the plain name, the others are numbered.
    for n in range(1, config.controller_managers + 1):
        specs.append(python(
            "controller-manager" if n == 1 else f"controller-manager-{n}", "controllers",
            "--kubeconfig", str(config.kubeconfig_for("controller-manager")),
            "--root-ca-file", str(pki.ca_cert), "--default-storage-class", "standard", *tracing,
            "--cluster-signing-cert-file", str(pki.ca_cert), "--cluster-signing-key-file", str(pki.ca_key),
            # Nodes are checked four times per grace period, at most every 5 s as upstream.
            *(("--node-monitor-grace-period", str(grace), "--node-monitor-period", str(min(5.0, grace / 4)))
              if grace is not None else ())))
    for n in range(1, config.schedulers + 1):
        specs.append(python("scheduler" if n == 1 else f"scheduler-{n}", "scheduler",
                            "--kubeconfig", str(config.kubeconfig_for("scheduler")), *tracing))
    for containerd in config.containerd_nodes():
        containerd.write_config()
        specs.append(ComponentSpec(f"containerd-{config.node_names[containerd.index - 1]}", containerd.argv(),
                                   ready=containerd.ready, cwd=cwd, env=env,
                                   before_stop=functools.partial(containerd.remove_pods, env),
                                   after_stop=containerd.cleanup))
    simulated_cidrs = config.simulated_pod_cidrs() if config.runtime != "cri" else []
    for i, node in enumerate(config.node_names, start=1):
        if config.runtime == "cri":
            endpoint, log_root = config.cri_endpoint(node)
            runtime_args: tuple[str, ...] = ("--container-runtime-endpoint", endpoint, "--pod-log-dir", str(log_root))
            pod_cidr = config.containerd_nodes()[i - 1].subnet if not config.containerd_socket else f"10.244.{i}.0/24"
        else:
            runtime_args, pod_cidr = (), simulated_cidrs[i - 1]
        kubelet_root = config.data_dir / "kubelets" / node
        specs.append(python(
            f"kubelet-{node}", "kubelet",
            "--kubeconfig", str(config.kubeconfig_for(f"kubelet-{node}")), "--node-name", node,
            "--runtime", config.runtime, "--root-dir", str(kubelet_root),
            *(("--node-capacity", config.node_capacity) if config.runtime != "cri" else ()),
            "--pod-cidr", pod_cidr, *runtime_args,
            "--tls-cert-file", str(config.pki_dir / f"kubelet-{node}.crt"),
            "--tls-private-key-file", str(config.pki_dir / f"kubelet-{node}.key"),
            "--client-ca-file", str(pki.ca_cert), *tracing,
            *(("--pod-start-delay", str(config.pod_start_delay)) if config.pod_start_delay else ()),
            *(("--node-status-update-frequency", str(config.node_status_update_frequency))
              if config.node_status_update_frequency is not None else ()),
            *(("--max-container-restart-period", str(config.max_container_restart_period))
              if config.max_container_restart_period is not None else ()),
            "--cluster-dns", cluster_dns_ip(config), "--cluster-domain", CLUSTER_DOMAIN,
            "--local-volume-dir", str(config.data_dir / "nodes" / node / "volumes")))
    specs += proxy_specs(config, python_env=env, tracing=tracing)
    specs.append(dns_spec(config, python_env=env, tracing=tracing))
    if config.runtime == "cri":  # memory-backed volumes are tmpfs mounts a stopped kubelet leaves behind
        specs = [dataclasses.replace(s, after_stop=functools.partial(unmount_under, config.data_dir / "kubelets"))
                 if s.name.startswith("kubelet-") else s for s in specs]
    return specs


def _ready(probe: ApiProbe) -> bool:
    return probe.readyz()[0]


def etcd_specs(config: ClusterConfig) -> list[ComponentSpec]:
    """Our own etcd's members (none with --etcd-endpoints), each with its own data dir, ports
    and certificates. The last gates what follows: by then every member listens."""
    members = config.etcd_member_list()
    cluster = initial_cluster([(m.name, m.peer_port) for m in members]) if len(members) > 1 else None
    specs = []
    for i, member in enumerate(members):
        argv = etcd_command(data_dir=member.data_dir, client_port=member.client_port, peer_port=member.peer_port,
                            name=member.name if cluster else "default", pki=EtcdPki(config.pki_dir),
                            pki_member=member.pki_name, initial_cluster=cluster)
        last = i == len(members) - 1
        specs.append(ComponentSpec(member.name, tuple(argv), cwd=config.data_dir,
                                   ready=functools.partial(port_open, member.client_port) if last else None))
    return specs


def unmount_under(root: Path) -> None:
    """Unmount every mount below `root`, deepest first (a stopped kubelet's tmpfs volumes)."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return
    prefix = str(root.resolve()) + "/"
    points = [line.split()[1] for line in lines if len(line.split()) > 1 and line.split()[1].startswith(prefix)]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", point], check=False, capture_output=True)


def cluster_dns_ip(config: ClusterConfig) -> str:
    """The kube-dns Service's address: the tenth of the service range (10.96.0.10), as kubeadm picks it."""
    return str(ipaddress.ip_network(config.service_cluster_ip_range, strict=False)[10])


def dns_spec(config: ClusterConfig, *, python_env: dict[str, str], tracing: tuple[str, ...]) -> ComponentSpec:
    """The cluster DNS: on this host's own address (which pods on the CNI bridges reach through
    their gateway), on a port it picks; it publishes that address and port as kube-dns's endpoints,
    so a restart on another port is followed by the proxies."""
    argv = (sys.executable, "-m", "clusterdns", "--kubeconfig", str(config.kubeconfig_for("kube-dns")),
            "--cluster-domain", CLUSTER_DOMAIN, "--service-ip", cluster_dns_ip(config),
            "--dns-bind-address", host_address(), "--dns-port", "0", *tracing)
    return ComponentSpec("kube-dns", argv, env=python_env, cwd=config.data_dir)


def proxy_specs(config: ClusterConfig, *, python_env: dict[str, str], tracing: tuple[str, ...]) -> list[ComponentSpec]:
    """One proxy per node: iptables on CRI nodes, simulated otherwise.

    CRI nodes share the host's network namespace, so their proxies elect one writer of the
    host's iptables among themselves (`proxy.ownership`). The first node's proxy is stopped
    last, and once it is gone `python -m proxy --cleanup` removes whatever is left (rules of a
    proxy that was killed), so `down` leaves no rule behind.
    """
    cri = config.runtime == "cri"
    cidr = (("--cluster-cidr", "10.88.0.0/16") if config.containerd_nodes() else
            ("--cluster-cidr", SIMULATED_CLUSTER_CIDR) if not cri else ())
    specs = []
    for i, node in enumerate(config.node_names, start=1):
        argv = (sys.executable, "-m", "proxy", "--kubeconfig", str(config.kubeconfig_for("kube-proxy")),
                "--hostname-override", node, "--proxy-mode", "iptables" if cri else "simulated", *cidr,
                "--healthz-bind-address", "127.0.0.1:0", "--status-file", str(config.proxy_status_file(node)),
                *tracing)
        after_stop = functools.partial(cleanup_proxy_rules, python_env) if cri and i == 1 else None
        specs.append(ComponentSpec(f"kube-proxy-{node}", argv, env=python_env, cwd=config.data_dir,
                                   after_stop=after_stop))
    return specs


def cleanup_proxy_rules(env: Mapping[str, str] | None = None) -> None:
    """Remove every proxy rule from this host's iptables (`python -m proxy --cleanup`; best effort)."""
    subprocess.run([sys.executable, "-m", "proxy", "--cleanup"], check=False, capture_output=True, timeout=60,
                   env=dict(env) if env is not None else python_env())


def python_env() -> dict[str, str]:
    """The environment of Python children: ours, unbuffered, able to import this source tree.

    Children run in the data dir, so a source tree that is not pip-installed is appended to
    PYTHONPATH; entries already there come first and win.
    """
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    root = str(Path(kube.__file__).resolve().parent.parent)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths and root not in site.getsitepackages():
        env["PYTHONPATH"] = os.pathsep.join([*paths, root])
    return env


def state_info(config: ClusterConfig) -> dict[str, object]:
    """The cluster-level keys of state.json, next to the supervisor's own."""
    return {
        "apiserver": config.apiserver_url,
        "etcd": list(config.etcd_urls),
        "kubeconfig": str(config.admin_kubeconfig),
        "containerd_socket": (config.containerd_socket or str(config.containerd_nodes()[0].socket)
                              if config.runtime == "cri" and config.node_names else None),
        "kubelet_cri_sockets": {n: config.cri_endpoint(n)[0] for n in config.node_names}
        if config.runtime == "cri" else {},
        "runtime": config.runtime,
        "nodes": config.node_names,
    }


def supervise(config: ClusterConfig, *, on_started: Callable[[], None] | None = None) -> int:
    """Run the cluster's supervisor in this process until a stop signal; the exit code."""
    def started() -> None:
        threading.Thread(target=_publish_join_objects, args=(config,), name="join-objects", daemon=True).start()
        if on_started is not None:
            on_started()

    supervisor = Supervisor(data_dir=config.data_dir, components=component_specs(config),
                            info=state_info(config), on_started=started)
    try:
        return supervisor.run()
    except ClusterLocked:
        logger.error("Another supervisor already runs for %s", config.data_dir)
        return 1


def _publish_join_objects(config: ClusterConfig, *, attempts: int = 30) -> None:
    """cluster-info and kubeadm's bootstrap bindings (picokube/bootstrap.py), retried while the API server starts."""
    for _ in range(attempts):
        try:
            ensure_join_objects(load_kubeconfig(config.admin_kubeconfig), server=config.apiserver_url)
            return
        except Exception as e:  # noqa: BLE001 - a retry loop's boundary
            logger.debug("Publishing cluster-info failed, will retry: %s", e)
            time.sleep(2.0)
    logger.warning("Could not publish cluster-info: machines cannot `picokube join` until `picokube token create`")


def up_foreground(config: ClusterConfig) -> int:
    """Prepare and supervise in this process; returns 0 after Ctrl-C stopped everything."""
    tokens = _prepare_locked(config)

    def on_started() -> None:
        logger.info("Control plane is up at %s; export KUBECONFIG=%s", config.apiserver_url,
                    config.admin_kubeconfig)
        threading.Thread(target=_announce_nodes_ready, args=(config, tokens[ADMIN_USER]),
                         name="nodes-ready", daemon=True).start()

    return supervise(config, on_started=on_started)


def up_detached(config: ClusterConfig, *, timeout: float) -> int:
    """Start the supervisor in the background and wait for a Ready cluster; the exit code."""
    tokens = _prepare_locked(config)
    log_path = config.logs_dir / SUPERVISOR_LOG
    with open(log_path, "ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "picokube", "_supervise", "--data-dir", str(config.data_dir)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            close_fds=True, cwd=config.data_dir, env=python_env())
    print(f"Started the supervisor (pid {child.pid}), log {log_path}", flush=True)
    try:
        waiting_for, why = _wait_ready(config, child, token=tokens[ADMIN_USER], timeout=timeout)
    except KeyboardInterrupt:
        print("Interrupted, stopping the cluster", file=sys.stderr)
        stop_cluster(config.data_dir)
        return 130
    if waiting_for is None:
        _print_summary(config)
        return 0
    print(f"picokube up: the cluster is not ready after {timeout:.0f}s: {why}", file=sys.stderr)
    print(_diagnose(config, waiting_for), file=sys.stderr)
    print("Stopping the cluster", file=sys.stderr)
    stop_cluster(config.data_dir)
    return 1


def _prepare_locked(config: ClusterConfig) -> dict[str, str]:
    try:
        with cluster_lock(config.data_dir):
            preflight(config)
            return prepare(config)
    except ClusterLocked as e:
        pid = ((read_state(config.data_dir) or {}).get("supervisor") or {}).get("pid", "?")
        raise UpError(f"picokube is already running for {config.data_dir} (supervisor pid {pid}); "
                      f"stop it with `picokube down --data-dir {config.data_dir}`") from e


def _wait_ready(config: ClusterConfig, child: subprocess.Popen[bytes], *, token: str,
                timeout: float) -> tuple[str | None, str]:
    """Poll until the API server and nodes are Ready.

    Returns (None, "") on success, else the component awaited last ("supervisor",
    "apiserver" or the kubelet of the first node not Ready) and why it is not ready.
    """
    deadline = time.monotonic() + timeout
    waiting_for, why = "apiserver", "not started yet"
    with ApiProbe(config.apiserver_url, ClusterPki(config.pki_dir).ca_cert, token=token) as probe:
        while time.monotonic() < deadline:
            code = child.poll()
            if code is not None:
                return "supervisor", f"the supervisor exited ({describe_exit(code)})"
            if waiting_for == "apiserver":
                ok, why = probe.readyz()
                if ok:
                    print(f"API server ready at {config.apiserver_url}", flush=True)
                    waiting_for = "kubelets"
                    continue
            else:
                missing, why = probe.nodes_not_ready(config.node_names)
                if not missing:
                    return None, ""
                waiting_for = f"kubelet-{missing[0]}"
            time.sleep(0.5)
    return waiting_for, why


def _diagnose(config: ClusterConfig, waiting_for: str) -> str:
    """Name the component that holds the cluster up and show the tail of its log."""
    if waiting_for == "supervisor":
        return _log_tail("supervisor", config.logs_dir / SUPERVISOR_LOG)
    state = read_state(config.data_dir) or {}
    records = {c["name"]: c for c in state.get("components", [])}
    # What the awaited component depends on comes first: a crash-looping etcd explains a
    # silent API server better than the API server's own log does.
    candidates = ([*(m.name for m in config.etcd_member_list()), *config.apiserver_ports()]
                  if waiting_for == "apiserver" else []) + [waiting_for]
    culprit = next((n for n in candidates if not _healthy(records.get(n))), waiting_for)
    rec = records.get(culprit) or {}
    alive = process_matches(rec.get("pid"), rec.get("argv") or [])
    facts = f"pid {rec.get('pid')}, {'alive' if alive else 'not running'}, restarts {rec.get('restarts', 0)}"
    if rec.get("last_exit"):
        facts += f", last exit {rec['last_exit']}"
    return f"{culprit} is not up ({facts}).\n" + _log_tail(culprit, config.logs_dir / f"{culprit}.log")


def _healthy(record: dict[str, Any] | None) -> bool:
    if record is None:
        return False
    return record.get("restarts") == 0 and process_matches(record.get("pid"), record.get("argv") or [])


def _log_tail(name: str, path: Path, lines: int = 20) -> str:
    try:
        tail = path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"(no log for {name} at {path})"
    return f"Last lines of {path}:\n" + "\n".join(f"    {line}" for line in tail)


def _announce_nodes_ready(config: ClusterConfig, token: str) -> None:
    with ApiProbe(config.apiserver_url, ClusterPki(config.pki_dir).ca_cert, token=token) as probe:
        while probe.nodes_not_ready(config.node_names)[0]:
            time.sleep(1.0)
    logger.info("Cluster ready: %d node(s) Ready (%s); export KUBECONFIG=%s", config.nodes,
                ", ".join(config.node_names) or "none", config.admin_kubeconfig)


def _print_summary(config: ClusterConfig) -> None:
    print(f"picokube is running (data dir {config.data_dir})\n"
          f"  API server:  {config.apiserver_url}\n"
          f"  etcd:        {', '.join(config.etcd_urls)}\n"
          f"  kubeconfig:  {config.admin_kubeconfig}\n"
          f"  nodes:       {', '.join(config.node_names) + ' (Ready)' if config.nodes else 'none'}\n"
          f"Use it:   export KUBECONFIG={config.admin_kubeconfig}\n"
          f"Stop it:  picokube down --data-dir {config.data_dir}", flush=True)
