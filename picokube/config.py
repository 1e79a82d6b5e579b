"""What `picokube up` was asked to run, and where each file of the data dir lives.

`ClusterConfig` is built once from the `up` flags and saved as `cluster.json` in the data
dir, so the detached supervisor (a separate process) runs exactly the cluster that the
user asked for. `state.json` (written by the supervisor) records what actually runs.

Guarantees: a `ClusterConfig` is immutable, validated on construction (ValueError with a
message naming the flag) and survives `to_json`/`from_json` unchanged.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlparse

from apiserver.config import MAX_WORKERS
from kube.podcidr import node_cidrs, pod_capacity
from kube.quantity import parse_capacity
from picokube._files import write_file_atomic
from picokube.containerd import ContainerdNode
from picokube.etcd_pki import EtcdPki

__all__ = ["CONFIG_FILE", "DEFAULT_NODE_CAPACITY", "ClusterConfig", "EtcdMember", "parse_endpoints"]

logger = logging.getLogger(__name__)

CONFIG_FILE = "cluster.json"
DEFAULT_NODE_CAPACITY = "cpu=4,memory=8Gi,pods=110"
SIMULATED_CLUSTER_CIDR = "10.244.0.0/16"  # simulated nodes' pod subnets are carved from it


def parse_endpoints(text: str) -> tuple[str, ...]:
    """Split and check a comma-separated list of http(s) etcd URLs."""
    urls = tuple(u.strip().rstrip("/") for u in text.split(",") if u.strip())
    for url in urls:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"--etcd-endpoints: {url!r} is not an http(s) URL")
    if not urls:
        raise ValueError("--etcd-endpoints: give at least one URL")
    return urls


@dataclass(frozen=True)
class EtcdMember:
    """One member of our own etcd: its name, data dir, client and peer ports, and the
    directory name of its certificates under pki/etcd/ (None: the single member's, at the top)."""

    name: str
    data_dir: Path
    client_port: int
    peer_port: int
    pki_name: str | None


@dataclass(frozen=True)
class ClusterConfig:
    """The resolved flags of `picokube up`."""

    data_dir: Path
    port: int = 6443
    etcd_port: int = 2379
    etcd_endpoints: tuple[str, ...] = ()  # empty: picokube runs its own etcd
    # TLS towards external https etcd endpoints (the API server's --etcd-cafile/certfile/keyfile);
    # our own etcd always uses the data dir's etcd PKI.
    etcd_cafile: str | None = None
    etcd_certfile: str | None = None
    etcd_keyfile: str | None = None
    nodes: int = 1
    runtime: str = "simulated"
    containerd_socket: str | None = None
    node_capacity: str = DEFAULT_NODE_CAPACITY
    pod_start_delay: float = 0.0  # seconds a simulated container takes to start
    # How soon a silent node is noticed (None: the components' defaults, 40 s and 10 s).
    node_monitor_grace_period: float | None = None
    node_status_update_frequency: float | None = None
    max_container_restart_period: float | None = None  # kubelets' CrashLoopBackOff cap (None: 300 s)
    tracing: bool = True  # every component exports spans to the API server's collector
    otlp_endpoint: str | None = None  # and, when set, to this external OTLP/HTTP collector
    service_cluster_ip_range: str = "10.96.0.0/12"  # the API server's cluster IP range
    service_node_port_range: str = "30000-32767"  # and its node port range
    controller_managers: int = 1  # instances; they elect a leader through a Lease
    schedulers: int = 1
    # The HA layout: our own etcd as a cluster of this many members, and this many API servers
    # behind a load balancer on --port (1 and 1: one etcd, one API server on --port, no balancer).
    etcd_members: int = 1
    apiservers: int = 1
    apiserver_workers: int = 1  # each API server's --workers: serving processes on its one address

    def __post_init__(self) -> None:
        for flag, port in (("--port", self.port), ("--etcd-port", self.etcd_port)):
            if not 0 < port < 65535:
                raise ValueError(f"{flag}: {port} is not a TCP port")
        if (self.etcd_cafile or self.etcd_certfile or self.etcd_keyfile) and not self.etcd_endpoints:
            raise ValueError("--etcd-cafile, --etcd-certfile and --etcd-keyfile are for --etcd-endpoints: "
                             "the cluster's own etcd uses the data dir's etcd certificates")
        if (self.etcd_certfile is None) != (self.etcd_keyfile is None):
            raise ValueError("--etcd-certfile and --etcd-keyfile must be given together")
        if self.nodes < 0:
            raise ValueError("--nodes must be 0 or more")
        if self.controller_managers < 1 or self.schedulers < 1:
            raise ValueError("--controller-managers and --schedulers must be 1 or more")
        if self.etcd_members < 1 or self.apiservers < 1:
            raise ValueError("--etcd-members and --apiservers must be 1 or more")
        if not 1 <= self.apiserver_workers <= MAX_WORKERS:
            raise ValueError(f"--apiserver-workers must be between 1 and {MAX_WORKERS}")
        if self.etcd_members > 1 and self.etcd_endpoints:
            raise ValueError("--etcd-members starts a cluster of our own: leave out --etcd-endpoints")
        if self.port + self.apiservers >= 65535 or self.etcd_port + 2 * self.etcd_members > 65535:
            raise ValueError("--port/--etcd-port: too high for the ports the members need after it")
        if self.pod_start_delay < 0:
            raise ValueError("--pod-start-delay must be 0 or more")
        for flag, seconds in (("--node-monitor-grace-period", self.node_monitor_grace_period),
                              ("--node-status-update-frequency", self.node_status_update_frequency),
                              ("--max-container-restart-period", self.max_container_restart_period)):
            if seconds is not None and seconds <= 0:
                raise ValueError(f"{flag} must be more than 0 seconds")
        parse_capacity(self.node_capacity)
        if self.runtime != "cri":  # refused here, before anything starts, when the pod subnets cannot fit
            self.simulated_pod_cidrs()
        try:
            ipaddress.ip_network(self.service_cluster_ip_range, strict=False)
        except ValueError:
            raise ValueError(f"--service-cluster-ip-range: {self.service_cluster_ip_range!r} is not a CIDR") from None
        low, _, high = self.service_node_port_range.partition("-")
        if not (low.isdigit() and high.isdigit() and 0 < int(low) <= int(high) <= 65535):
            raise ValueError(f"--service-node-port-range: {self.service_node_port_range!r} is not a port range "
                             "(30000-32767)")

    def simulated_pod_cidrs(self) -> list[str]:
        """Each simulated node's pod subnet, sized to `--node-capacity`'s pods; ValueError if they cannot fit."""
        pods = pod_capacity(parse_capacity(self.node_capacity))
        return node_cidrs(SIMULATED_CLUSTER_CIDR, pods, len(self.node_names))

    def containerd_nodes(self) -> list[ContainerdNode]:
        """The private containerd of each node (none with --containerd-socket or a simulated runtime)."""
        if self.runtime != "cri" or self.containerd_socket:
            return []
        return [ContainerdNode(self.data_dir / "containerd" / name, i)
                for i, name in enumerate(self.node_names, start=1)]

    def cri_endpoint(self, node: str) -> tuple[str, Path]:
        """(CRI endpoint, pod log root) of one node's kubelet."""
        if self.containerd_socket:
            return f"unix://{self.containerd_socket}", self.data_dir / "pods" / node
        own = self.containerd_nodes()[self.node_names.index(node)]
        return own.endpoint, own.log_root

    @property
    def own_etcd(self) -> bool:
        return not self.etcd_endpoints

    def etcd_client_files(self) -> tuple[str | None, str | None, str | None]:
        """(CA, client certificate, client key) the API server presents to etcd."""
        if self.own_etcd:
            pki = EtcdPki(self.pki_dir)
            return str(pki.ca.ca_cert), str(pki.apiserver_client_cert), str(pki.apiserver_client_key)
        return self.etcd_cafile, self.etcd_certfile, self.etcd_keyfile

    @property
    def etcd_urls(self) -> tuple[str, ...]:
        """The etcd client URLs the API server dials; our own etcd serves https only."""
        return self.etcd_endpoints or tuple(f"https://127.0.0.1:{m.client_port}" for m in self.etcd_member_list())

    def etcd_member_list(self) -> list[EtcdMember]:
        """Our own etcd's members: one keeps the plain name `etcd`, the data dir `etcd/` and
        --etcd-port (peer +1); member i of several is `etcd-i` in `etcd/etcd-i/` on
        --etcd-port + 2i (peer +1)."""
        if not self.own_etcd:
            return []
        if self.etcd_members == 1:
            return [EtcdMember("etcd", self.etcd_data_dir, self.etcd_port, self.etcd_port + 1, None)]
        return [EtcdMember(f"etcd-{i}", self.etcd_data_dir / f"etcd-{i}", self.etcd_port + 2 * i,
                           self.etcd_port + 2 * i + 1, f"etcd-{i}") for i in range(self.etcd_members)]

    @property
    def load_balanced(self) -> bool:
        """Whether the API servers sit behind a balancer on --port (more than one of them)."""
        return self.apiservers > 1

    def apiserver_ports(self) -> dict[str, int]:
        """Each API server's name and port: `apiserver` on --port alone; `apiserver-i` on
        --port + 1 + i behind the balancer."""
        if not self.load_balanced:
            return {"apiserver": self.port}
        return {f"apiserver-{i}": self.port + 1 + i for i in range(self.apiservers)}

    @property
    def apiserver_url(self) -> str:
        """The address clients use: the balancer's, or the one API server's."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def node_names(self) -> list[str]:
        return [f"node-{i}" for i in range(1, self.nodes + 1)]

    # Files of the data dir.
    @property
    def pki_dir(self) -> Path:
        return self.data_dir / "pki"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def etcd_data_dir(self) -> Path:
        return self.data_dir / "etcd"

    @property
    def token_file(self) -> Path:
        return self.data_dir / "tokens.csv"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def proxy_status_file(self, node: str) -> Path:
        """Where node's proxy reports what it programmed (`proxy/node-1.json`)."""
        return self.data_dir / "proxy" / f"{node}.json"

    def kubeconfig_for(self, component: str) -> Path:
        """`controller-manager.kubeconfig`, `scheduler.kubeconfig`, `kubelet-node-1.kubeconfig`."""
        return self.data_dir / f"{component}.kubeconfig"

    def to_json(self) -> str:
        doc = asdict(self)
        doc["data_dir"] = str(self.data_dir)
        doc["etcd_endpoints"] = list(self.etcd_endpoints)
        return json.dumps(doc, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> ClusterConfig:
        doc = json.loads(text)
        doc["data_dir"] = Path(doc["data_dir"])
        doc["etcd_endpoints"] = tuple(doc.get("etcd_endpoints") or ())
        return cls(**doc)

    def save(self) -> Path:
        path = self.data_dir / CONFIG_FILE
        write_file_atomic(path, self.to_json().encode(), mode=0o644)
        return path

    @classmethod
    def load(cls, data_dir: Path) -> ClusterConfig:
        """The config `up` saved in `data_dir`; OSError/ValueError when there is none."""
        return cls.from_json((data_dir / CONFIG_FILE).read_text())
