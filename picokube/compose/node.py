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
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from picokube.containerd import ContainerdNode

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


LOCAL_VOLUME_DIR = "/var/lib/kubelet/local-volumes"
"""Where this node's local-path PersistentVolumes live (inside the node's container)."""


def kubelet_argv(a: argparse.Namespace) -> list[str]:
    pki = a.config_dir / "pki"
    return [sys.executable, "-m", "kubelet", "--kubeconfig", str(a.config_dir / f"kubelet-{a.node_name}.kubeconfig"),
            "--node-name", a.node_name, "--runtime", "cri", "--container-runtime-endpoint", f"unix://{SOCKET}",
            "--pod-cidr", a.pod_subnet, "--address", a.node_ip, "--port", str(a.kubelet_port),
            "--tls-cert-file", str(pki / f"kubelet-{a.node_name}.crt"),
            "--tls-private-key-file", str(pki / f"kubelet-{a.node_name}.key"),
            "--client-ca-file", str(pki / "ca.crt"), "--cluster-dns", a.cluster_dns,
            "--cluster-domain", a.cluster_domain, "--local-volume-dir", LOCAL_VOLUME_DIR, *a.kubelet_arg]


def proxy_argv(a: argparse.Namespace) -> list[str]:
    return [sys.executable, "-m", "proxy", "--kubeconfig", str(a.config_dir / "kube-proxy.kubeconfig"),
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
    a = p.parse_args(argv)
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
    kubelet = subprocess.Popen(kubelet_argv(a))
    proxy = subprocess.Popen(proxy_argv(a))
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
