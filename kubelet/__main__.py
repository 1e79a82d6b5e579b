"""`python -m kubelet --kubeconfig FILE --node-name NAME`: run one node's kubelet until SIGTERM.

Flags follow the upstream kubelet's names where one exists. `--count N --node-name-prefix P`
(simulated runtime only) runs N hollow nodes P1..PN in this one process instead, for scale
tests (see `kubelet.hollow`). `kube.component` does the rest (logging, signals). Exit status
0 on a signal, 1 on a failure (an unusable kubeconfig, an unreachable runtime, a port in
use), 2 on bad flags (named on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import ipaddress
import sys

from kube.client import RESTClient, load_kubeconfig
from kube.component import UsageError, add_tracing_flags, parse_flags, run_component, tracing_from_flags
from kube.podcidr import check_pod_capacity, pod_capacity
from kube.quantity import parse_capacity
from kube.tracing import setup_tracing
from kubelet.config import FIELD_MANAGER, USER_AGENT, KubeletConfig
from kubelet.cri.interface import CRIError, RuntimeService
from kubelet.cri.remote import RemoteRuntime
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.hollow import hollow_configs, run_hollow_nodes
from kubelet.kubelet import Kubelet
from kubelet.logs import ContainerLogSource
from kubelet.machine import allocatable_from, machine_capacity
from kubelet.server import KubeletServer
from kubelet.streaming import CRIStreamingHandler, ProtocolStreamingHandler, StreamingHandler
from kubelet.streaming.simulated import SimulatedStreamingRuntime

PROG = "python -m kubelet"
SIMULATED_CAPACITY = "cpu=4,memory=8Gi,pods=110"


class ConfigError(UsageError):
    """A flag's value cannot be used."""


def _capacity(text: str) -> dict[str, str]:
    try:
        return parse_capacity(text)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _node_resources(runtime: str, flag: str | None, log_dir: str) -> tuple[dict[str, str], dict[str, str] | None]:
    """(capacity, allocatable or None for the same): the flag's when given, else the machine's for cri nodes."""
    if flag is not None:
        return _capacity(flag), None
    if runtime == "cri":
        capacity = machine_capacity(log_dir)
        return capacity, allocatable_from(capacity)
    return _capacity(SIMULATED_CAPACITY), None


def _labels(text: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ConfigError(f"--node-labels: {item!r} is not KEY=VALUE")
        labels[key] = value
    return labels


def _cluster_dns(text: str) -> tuple[str, ...]:
    addresses = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        try:
            addresses.append(str(ipaddress.ip_address(item)))
        except ValueError:
            raise ConfigError(f"--cluster-dns: {item!r} is not an IP address") from None
    return tuple(addresses)


def _taints(text: str) -> tuple[dict[str, str], ...]:
    taints = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        kv, colon, effect = item.rpartition(":")
        key, _, value = kv.partition("=")
        if not colon or not key or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ConfigError(f"--register-with-taints: {item!r} is not KEY[=VALUE]:NoSchedule|PreferNoSchedule|"
                              "NoExecute")
        taints.append({"key": key, "effect": effect, **({"value": value} if value else {})})
    return tuple(taints)


@dataclasses.dataclass(frozen=True)
class Invocation:
    config: KubeletConfig
    count: int = 0
    """0: one ordinary kubelet; N: N hollow nodes named `node_name_prefix` + 1..N."""
    node_name_prefix: str = "hollow-"


def parse_args(argv: list[str] | None = None) -> Invocation:
    p = argparse.ArgumentParser(prog=PROG, description="picokube kubelet")
    p.add_argument("--kubeconfig", help="kubeconfig with this node's identity (system:node:<name>)")
    p.add_argument("--node-name", help="this node's name (required unless --count)")
    p.add_argument("--count", type=int, default=0,
                   help="run this many hollow nodes in one process (simulated runtime; cluster-admin kubeconfig)")
    p.add_argument("--node-name-prefix", default="hollow-", help="with --count: nodes are PREFIX1..PREFIXN")
    p.add_argument("--node-labels", default="", help="labels for the Node when registered: KEY=VALUE,...")
    p.add_argument("--register-with-taints", default="",
                   help="taints for the Node when registered: KEY[=VALUE]:EFFECT,...")
    p.add_argument("--runtime", choices=["cri", "simulated"], default="simulated")
    p.add_argument("--container-runtime-endpoint", default="unix:///run/containerd/containerd.sock",
                   help="the CRI socket, with --runtime cri")
    p.add_argument("--pod-log-dir", default="/var/log/pods",
                   help="where container logs are written, with --runtime cri (<ns>_<pod>_<uid>/<container>/N.log)")
    p.add_argument("--root-dir", default="/var/lib/kubelet",
                   help="the kubelet's directory for pods' volumes (<root-dir>/pods/<uid>/volumes)")
    p.add_argument("--node-capacity", default=None,
                   help="what the node offers, as NAME=QUANTITY,... (default: the machine's own with "
                        f"--runtime cri, else {SIMULATED_CAPACITY})")
    p.add_argument("--pod-cidr", default="10.244.1.0/24")
    p.add_argument("--pod-start-delay", type=float, default=0.0,
                   help="seconds the simulated runtime takes to start a container")
    p.add_argument("--address", default="127.0.0.1", help="the node's InternalIP and the server's bind address")
    p.add_argument("--port", type=int, default=0, help="the kubelet server's port (0: any free port)")
    p.add_argument("--tls-cert-file")
    p.add_argument("--tls-private-key-file")
    p.add_argument("--client-ca-file")
    p.add_argument("--node-status-update-frequency", type=float, default=10.0,
                   help="seconds between Lease renewals")
    p.add_argument("--cluster-dns", default="",
                   help="the cluster DNS's address(es), comma-separated: the nameserver of ClusterFirst pods")
    p.add_argument("--cluster-domain", default="cluster.local", help="the cluster's DNS domain (pods' search path)")
    p.add_argument("--resolv-conf", default="/etc/resolv.conf",
                   help="the resolver file pods with dnsPolicy Default get (\"\": none)")
    p.add_argument("--max-container-restart-period", type=float, default=300.0,
                   help="seconds CrashLoopBackOff waits at most between restarts (10 s doubling up to this)")
    p.add_argument("--local-volume-dir", default=None,
                   help="where this node keeps local-path PersistentVolumes (default: none, the node takes none)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper)
    add_tracing_flags(p)
    a = p.parse_args(argv)
    if a.runtime == "cri" and a.count:
        raise ConfigError("--count runs hollow nodes, which need --runtime simulated")
    if a.max_container_restart_period <= 0:
        raise ConfigError("--max-container-restart-period must be more than 0 seconds")
    if a.count < 0:
        raise ConfigError("--count must be 0 or more")
    if not a.count and not a.node_name:
        raise ConfigError("--node-name is required (or --count for hollow nodes)")
    capacity, allocatable = _node_resources(a.runtime, a.node_capacity, a.pod_log_dir)
    if a.runtime == "simulated" and not a.count:  # hollow nodes get subnets sized for them
        try:
            check_pod_capacity(a.pod_cidr, pod_capacity(capacity))
        except ValueError as e:
            raise ConfigError(str(e)) from None
    config = KubeletConfig(node_name=a.node_name or "", kubeconfig=a.kubeconfig, runtime=a.runtime,
                           container_runtime_endpoint=a.container_runtime_endpoint, pod_log_dir=a.pod_log_dir,
                           root_dir=a.root_dir,
                         capacity=capacity, allocatable=allocatable, pod_cidr=a.pod_cidr,
                         pod_start_delay=a.pod_start_delay, address=a.address, port=a.port,
                         tls_cert_file=a.tls_cert_file, tls_private_key_file=a.tls_private_key_file,
                         client_ca_file=a.client_ca_file, node_status_update_frequency=a.node_status_update_frequency,
                         node_labels=_labels(a.node_labels), register_with_taints=_taints(a.register_with_taints),
                         cluster_dns=_cluster_dns(a.cluster_dns), cluster_domain=a.cluster_domain.strip("."),
                         resolv_conf=a.resolv_conf,
                         max_container_restart_period=a.max_container_restart_period, log_level=a.log_level,
                         tracing=tracing_from_flags(a), local_volume_dir=a.local_volume_dir)
    return Invocation(config, a.count, a.node_name_prefix)


async def build_runtime(config: KubeletConfig) -> tuple[RuntimeService, str, str]:
    """The runtime and its (name, version) as the Node reports them; CRIError if unreachable."""
    if config.runtime == "cri":
        runtime = RemoteRuntime(config.container_runtime_endpoint, log_root=config.pod_log_dir)
        try:
            version = await runtime.version()
        except CRIError as e:
            raise CRIError(f"{config.container_runtime_endpoint}: {e}") from e
        return runtime, version.runtime_name, version.runtime_version
    return SimulatedRuntime(pod_cidr=config.pod_cidr, start_delay=config.pod_start_delay), RUNTIME_NAME, \
        RUNTIME_VERSION


def streaming_handler(runtime: RuntimeService) -> StreamingHandler | None:
    """Who serves exec, attach and port-forward: the protocols spoken here for a simulated runtime,
    the CRI runtime's own streaming server (relayed to) for a real one."""
    if isinstance(runtime, SimulatedRuntime):
        return ProtocolStreamingHandler(SimulatedStreamingRuntime(runtime))
    if isinstance(runtime, RemoteRuntime):
        return CRIStreamingHandler(runtime)
    return None


async def run(config: KubeletConfig, count: int = 0, prefix: str = "hollow-") -> None:
    """Run one kubelet (or `count` hollow nodes) until cancelled."""
    client_config = load_kubeconfig(config.kubeconfig)
    setup_tracing("kubelet", config=config.tracing, client=client_config)
    if count:
        async with RESTClient(client_config, user_agent=USER_AGENT, field_manager=FIELD_MANAGER) as client:
            await run_hollow_nodes(hollow_configs(config, count, prefix), client)
        return
    runtime, name, version = await build_runtime(config)
    server = KubeletServer(ContainerLogSource(runtime), address=config.address, port=config.port,
                           cert_file=config.tls_cert_file, key_file=config.tls_private_key_file,
                           client_ca_file=config.client_ca_file, streaming=streaming_handler(runtime))
    port = server.bind()
    async with RESTClient(client_config, user_agent=USER_AGENT, field_manager=FIELD_MANAGER) as client:
        kubelet = Kubelet(config, client, runtime, runtime_name=name, runtime_version=version, kubelet_port=port)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(server.serve())
            tg.create_task(kubelet.run())


def main(argv: list[str] | None = None) -> int:
    invocation = parse_flags(parse_args, argv, prog=PROG)
    config = invocation.config
    name = f"kubelet-{invocation.node_name_prefix}x{invocation.count}" if invocation.count \
        else f"kubelet-{config.node_name}"
    failures: dict[type[BaseException], str] = {CRIError: "Cannot reach the container runtime",
                                                OSError: "Cannot start the kubelet server"}
    return run_component(lambda: run(config, invocation.count, invocation.node_name_prefix), name=name,
                         log_level=config.log_level, failures=failures)


if __name__ == "__main__":
    sys.exit(main())
