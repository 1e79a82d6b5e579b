"""PID 1 of a compose kubelet node: the node's own containerd, then the kubelet, nested like kind.

In order (each step measured to work on Docker without `privileged: true`, see the compose
file for the capabilities and security options the node service needs):
1. make `/` shared and, when the node is not privileged, remount /sys and the cgroup
   mounts read-write so runc can create the pods' cgroups;
2. write containerd's config (the standard socket `/run/containerd/containerd.sock`, so
   `ctr -n k8s.io images import -` works inside the node, state on the /run tmpfs, images on
   the /var/lib/containerd volume) and a CNI bridge `cni0` on this node's `--pod-subnet`;
3. route every other node's pod subnet via that node's address (`--route SUBNET=IP`), and
   keep pod-to-pod traffic inside `--cluster-cidr` out of the bridge's masquerade, so a pod
   on one node reaches a pod on another by IP and sees its real address;
4. start containerd, wait for it, import the locally built busybox and pause images;
5. run the kubelet against it (pods' resolv.conf naming the cluster DNS at `--cluster-dns`,
   the kube-dns Service's address), and the node's proxy (`python -m proxy`, iptables mode, the
   node container's own network namespace), until any of them exits: then stop the others
   and exit non-zero, so `restart: unless-stopped` brings the whole node back. SIGTERM
   stops all three cleanly (the proxy removes its rules).

A node of the HA variant joins instead (`--join-dir`, `--server`): it holds no credential
from the init step, only the bootstrap token and the CA's hash, and before step 5 it does
what `picokube join` does (`picokube.join.bootstrap_node`): verify the cluster CA against
the hash, ask for a client certificate for `system:node:<name>` with the token and write
its kubeconfig to `--data-dir`, which the kubelet and proxy then use. A certificate already
there, from the same CA and not about to expire, is kept, so a restarted node does not need
the token again (as the kubelet keeps its `--kubeconfig` over its bootstrap kubeconfig).
"""

from __future__ import annotations

import argparse
import datetime as dt
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

import httpx
from cryptography import x509

from kube.client.config import KubeconfigError, load_kubeconfig
from kube.csr import ca_cert_hash
from picokube.certificate_manager import CertificateError
from picokube.compose.init import JOIN_HASH_FILE, JOIN_TOKEN_FILE
from picokube.containerd import ContainerdNode
from picokube.discovery import DiscoveryError
from picokube.join import JoinConfig, bootstrap_node

__all__ = ["main"]

CONFIG_DIR = Path("/etc/picokube")
SOCKET = Path("/run/containerd/containerd.sock")


def log(message: str) -> None:
    print(f"node: {message}", file=sys.stderr, flush=True)


def _run(*argv: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(list(argv), check=False, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {out.stderr.strip() or out.stdout.strip()}")
    return out


def prepare_mounts() -> None:
    _run("mount", "--make-rshared", "/")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point, options, fstype = fields[4], fields[5].split(","), fields[fields.index("-") + 1]
        if "ro" not in options:
            continue  # privileged, or a runtime that mounts these read-write already
        if point == "/sys":
            _run("mount", "-o", "remount,rw", "/sys")
        elif fstype in ("cgroup", "cgroup2") and point.startswith("/sys/fs/cgroup"):
            _run("mount", "-o", "remount,bind,rw", point)


def prepare_network(pod_subnet: str, cluster_cidr: str, routes: list[str]) -> None:
    for route in routes:
        subnet, eq, via = route.partition("=")
        if not eq:
            raise ValueError(f"--route: {route!r} is not SUBNET=IP")
        _run("ip", "route", "replace", subnet, "via", via, check=True)
    rule = ["-s", cluster_cidr, "-d", cluster_cidr, "-j", "RETURN"]
    if _run("iptables", "-t", "nat", "-C", "POSTROUTING", *rule).returncode != 0:
        _run("iptables", "-t", "nat", "-I", "POSTROUTING", "1", *rule, check=True)
    log(f"pod subnet {pod_subnet}, routes {', '.join(routes) or 'none'}")


def start_containerd(node: ContainerdNode, timeout: float = 60.0) -> subprocess.Popen[bytes]:
    node.write_config()
    SOCKET.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(node.argv())
    deadline = time.monotonic() + timeout
    while not node.answers():
        if proc.poll() is not None:
            raise RuntimeError(f"containerd exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"containerd did not answer on {SOCKET} within {timeout:.0f}s")
        time.sleep(0.05)
    node.import_images()
    log("containerd ready, images imported")
    return proc


KEEP_CERTIFICATE_FOR = dt.timedelta(hours=1)
"""A kept client certificate must stay valid at least this long; else the node joins again."""


def join_config(a: argparse.Namespace) -> JoinConfig:
    return JoinConfig(server=a.server, token=(a.join_dir / JOIN_TOKEN_FILE).read_text().strip(),
                      ca_cert_hash=(a.join_dir / JOIN_HASH_FILE).read_text().strip(), node_name=a.node_name,
                      runtime="cri", data_dir=a.data_dir, pod_cidr=a.pod_subnet)


def has_usable_certificate(config: JoinConfig) -> bool:
    """The kubeconfig a former join wrote trusts the same CA and its certificate is still good."""
    try:
        current = load_kubeconfig(config.kubeconfig)
    except (OSError, KubeconfigError, ValueError):
        return False
    if current.ca_data is None or current.client_cert_data is None or current.server != config.server.rstrip("/"):
        return False
    try:
        if ca_cert_hash(current.ca_data) != config.ca_cert_hash:
            return False
        cert = x509.load_pem_x509_certificate(current.client_cert_data)
    except ValueError:
        return False
    return cert.not_valid_after_utc > dt.datetime.now(dt.UTC) + KEEP_CERTIFICATE_FOR


def join(a: argparse.Namespace) -> JoinConfig:
    """The node's credentials: kept from a former join, or obtained with the token now."""
    config = join_config(a)
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if has_usable_certificate(config):
        log(f"keeping the client certificate in {config.kubeconfig}")
    else:
        bootstrap_node(config)
    return config


LOCAL_VOLUME_DIR = "/var/lib/kubelet/local-volumes"
"""Where this node's local-path PersistentVolumes live (inside the node's container)."""


def kubelet_argv(a: argparse.Namespace, joined: JoinConfig | None = None) -> list[str]:
    """The kubelet's flags: credentials from the config volume, or from the join (no serving certificate)."""
    pki = a.config_dir / "pki"
    credentials = (["--kubeconfig", str(joined.kubeconfig), "--client-ca-file", str(joined.ca_file)] if joined else
                   ["--kubeconfig", str(a.config_dir / f"kubelet-{a.node_name}.kubeconfig"),
                    "--tls-cert-file", str(pki / f"kubelet-{a.node_name}.crt"),
                    "--tls-private-key-file", str(pki / f"kubelet-{a.node_name}.key"),
                    "--client-ca-file", str(pki / "ca.crt")])
    return [sys.executable, "-m", "kubelet", *credentials,
            "--node-name", a.node_name, "--runtime", "cri", "--container-runtime-endpoint", f"unix://{SOCKET}",
            "--pod-cidr", a.pod_subnet, "--address", a.node_ip, "--port", str(a.kubelet_port),
            "--cluster-dns", a.cluster_dns,
            "--cluster-domain", a.cluster_domain, "--local-volume-dir", LOCAL_VOLUME_DIR, *a.kubelet_arg]


def proxy_argv(a: argparse.Namespace, joined: JoinConfig | None = None) -> list[str]:
    kubeconfig = joined.kubeconfig if joined else a.config_dir / "kube-proxy.kubeconfig"
    return [sys.executable, "-m", "proxy", "--kubeconfig", str(kubeconfig),
            "--hostname-override", a.node_name, "--proxy-mode", "iptables", "--cluster-cidr", a.cluster_cidr,
            *a.proxy_arg]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m picokube.compose.node", description=__doc__.splitlines()[0])
    p.add_argument("--node-name", required=True)
    p.add_argument("--node-ip", required=True)
    p.add_argument("--pod-subnet", required=True)
    p.add_argument("--cluster-cidr", default="10.244.0.0/16")
    p.add_argument("--route", action="append", default=[], help="SUBNET=IP: another node's pod subnet")
    p.add_argument("--config-dir", type=Path, default=CONFIG_DIR)
    p.add_argument("--kubelet-port", type=int, default=10250)
    p.add_argument("--cluster-dns", default="10.96.0.10", help="the kube-dns Service's address")
    p.add_argument("--cluster-domain", default="cluster.local")
    p.add_argument("--kubelet-arg", action="append", default=[], help="one more kubelet flag (repeatable)")
    p.add_argument("--proxy-arg", action="append", default=[], help="one more proxy flag (repeatable)")
    p.add_argument("--join-dir", type=Path, default=None,
                   help="join with the token and CA hash in this folder instead of the config volume's credentials")
    p.add_argument("--server", default=None, help="with --join-dir: the API server's URL (the balancer's)")
    p.add_argument("--data-dir", type=Path, default=Path("/var/lib/picokube-node"),
                   help="with --join-dir: where the issued certificate is kept")
    a = p.parse_args(argv)
    if (a.join_dir is None) != (a.server is None):
        p.error("--join-dir and --server go together")
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        prepare_mounts()
        prepare_network(a.pod_subnet, a.cluster_cidr, a.route)
        node = ContainerdNode(root=Path("/var/lib/containerd/picokube"), index=0, grpc_socket=SOCKET,
                              state_dir=Path("/run/containerd/state"), bridge_name="cni0", subnet_cidr=a.pod_subnet)
        containerd = start_containerd(node)
    except (OSError, RuntimeError, ValueError) as e:
        log(f"cannot start: {e}")
        return 1
    joined = None
    if a.join_dir is not None:
        try:
            joined = join(a)
        except (OSError, DiscoveryError, CertificateError, httpx.HTTPError) as e:
            log(f"cannot join: {e}")
            containerd.terminate()
            containerd.wait(timeout=10)
            return 1
    kubelet = subprocess.Popen(kubelet_argv(a, joined))
    proxy = subprocess.Popen(proxy_argv(a, joined))
    procs = {"containerd": containerd, "kubelet": kubelet, "proxy": proxy}
    code = 0
    while not stopping:
        exited = [name for name, proc in procs.items() if proc.poll() is not None]
        if exited:
            log(f"{exited[0]} exited with {procs[exited[0]].returncode}; stopping the node")
            code = 1
            break
        time.sleep(0.2)
    for proc in (proxy, kubelet, containerd):  # the kubelet before containerd: it may still talk to it
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return code


if __name__ == "__main__":
    sys.exit(main())
