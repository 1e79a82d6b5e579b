"""A private containerd per CRI node, under the data dir: config, CNI network, images, cleanup.

What `picokube up --runtime cri` runs for node N when no `--containerd-socket` is given
(the settings measured to work on this machine kind):
- `containerd --config <data>/containerd/<node>/config.toml` with its root, state, runc root
  and socket under that folder, the CRI plugin's sandbox image set to the locally built
  pause image, `restrict_oom_score_adj = true` (no CAP_SYS_RESOURCE on these machines), and
  AppArmor/SELinux off;
- a CNI bridge network `pkbr<N>` on subnet 10.88.<N>.0/24 (bridge + firewall + portmap;
  containerd adds loopback), so each node's pods have their own subnet and bridge, and pods
  on different nodes reach each other through the host's routes to the bridges;
- once its socket answers, the busybox and pause images are imported into the `k8s.io`
  namespace (what the CRI sees) with `ctr images import`, so no registry is needed;
- `cleanup_node` removes what containerd leaves behind when stopped: the bridge and the NAT
  rules for the node's subnet.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from picokube.images import (
    BUSYBOX_IMAGE,
    PAUSE_IMAGE,
    build_busybox_image,
    find_busybox,
)

if TYPE_CHECKING:  # picokube.config imports this module
    from picokube.config import ClusterConfig

__all__ = ["CNI_BIN_DIR", "ContainerdNode", "containerd_available", "import_image"]

CNI_BIN_DIR = "/usr/lib/cni"


def containerd_available() -> str | None:
    """Why a private containerd cannot run here, or None when it can."""
    for binary in ("containerd", "runc", "ctr"):
        if shutil.which(binary) is None:
            return f"{binary} is not installed (apt-get install containerd runc)"
    if not Path(CNI_BIN_DIR, "bridge").exists():
        return "CNI plugins are not installed (apt-get install containernetworking-plugins)"
    try:
        find_busybox()
    except FileNotFoundError as e:
        return str(e)
    if os.geteuid() != 0:
        return "running containers needs root"
    return None


@dataclass(frozen=True)
class ContainerdNode:
    """One node's containerd: where it lives and how its network is laid out.

    Everything defaults to a layout under `root` derived from the node's `index` (what
    `picokube up` uses); a compose node container overrides the socket (the standard
    `/run/containerd/containerd.sock`, so `ctr` finds it), state dir, bridge and subnet.
    """

    root: Path
    index: int
    grpc_socket: Path | None = None
    state_dir: Path | None = None
    bridge_name: str | None = None
    subnet_cidr: str | None = None

    @property
    def socket(self) -> Path:
        return self.grpc_socket or self.root / "containerd.sock"

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket}"

    @property
    def bridge(self) -> str:
        return self.bridge_name or f"pkbr{self.index}"

    @property
    def subnet(self) -> str:
        return self.subnet_cidr or f"10.88.{self.index}.0/24"

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def log_root(self) -> Path:
        return self.root / "pods"

    def write_config(self) -> None:
        r = self.root
        for d in ("root", "state", "runc", "cni/net.d", "cni/ipam", "images", "pods"):
            (r / d).mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(f'''version = 2
root = "{r}/root"
state = "{self.state_dir or r / 'state'}"
[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{self.socket}.ttrpc"
[debug]
  address = ""
  level = "warn"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_IMAGE}"
  disable_apparmor = true
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{r}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{CNI_BIN_DIR}"
    conf_dir = "{r}/cni/net.d"
    max_conf_num = 1
''')
        (r / "cni/net.d/10-picokube.conflist").write_text(json.dumps({
            "cniVersion": "1.0.0", "name": f"picokube-{self.bridge}", "plugins": [
                {"type": "bridge", "bridge": self.bridge, "isGateway": True, "ipMasq": True, "hairpinMode": True,
                 "ipam": {"type": "host-local", "dataDir": f"{r}/cni/ipam",
                          "ranges": [[{"subnet": self.subnet}]], "routes": [{"dst": "0.0.0.0/0"}]}},
                {"type": "firewall"},
                {"type": "portmap", "capabilities": {"portMappings": True}}]}, indent=2))
        for ref, cmd in ((BUSYBOX_IMAGE, ["sh"]), (PAUSE_IMAGE, ["sleep", "2147483647"])):
            target = r / "images" / (ref.replace("/", "_").replace(":", "_") + ".tar")
            if not target.exists():
                build_busybox_image(target, ref, cmd)

    def argv(self) -> tuple[str, ...]:
        return ("containerd", "--config", str(self.config_file))

    def answers(self) -> bool:
        if not self.socket.exists():
            return False
        out = subprocess.run(["ctr", "--address", str(self.socket), "version"], check=False, capture_output=True,
                             timeout=10)
        return out.returncode == 0

    def import_images(self) -> None:
        """Import the local images into the CRI's namespace (idempotent)."""
        for tarball in sorted((self.root / "images").glob("*.tar")):
            self.import_image(tarball)

    def import_image(self, tarball: Path) -> None:
        out = subprocess.run(["ctr", "--address", str(self.socket), "-n", "k8s.io", "images", "import",
                              str(tarball)], check=False, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"importing {tarball.name} failed: {out.stderr.strip()}")

    def ready(self) -> bool:
        """The readiness gate for the supervisor: socket answers, images imported."""
        if not self.answers():
            return False
        try:
            self.import_images()
        except (RuntimeError, subprocess.TimeoutExpired):
            return False
        return True

    def remove_pods(self, env: Mapping[str, str] | None = None) -> None:
        """Stop and remove every sandbox while containerd still runs (its shims outlive it)."""
        if self.answers():
            subprocess.run([sys.executable, "-m", "kubelet.cri.reset", self.endpoint], check=False,
                           capture_output=True, timeout=120, env=dict(env) if env is not None else None)

    def cleanup(self) -> None:
        """Remove the bridge and this node's NAT rules (best effort; containerd is stopped)."""
        subprocess.run(["ip", "link", "del", self.bridge], check=False, capture_output=True)
        listed = subprocess.run(["iptables", "-t", "nat", "-S", "POSTROUTING"], check=False, capture_output=True,
                                text=True)
        for rule in listed.stdout.splitlines():
            if self.subnet in rule and rule.startswith("-A "):
                subprocess.run(["iptables", "-t", "nat", "-D", *rule.split()[1:]], check=False, capture_output=True)


def import_image(config: ClusterConfig, node: str, tarball: Path) -> None:
    """Import `tarball` into one node's containerd (its own, or the shared --containerd-socket)."""
    endpoint, _ = config.cri_endpoint(node)
    socket = endpoint.removeprefix("unix://")
    out = subprocess.run(["ctr", "--address", socket, "-n", "k8s.io", "images", "import", str(tarball)],
                         check=False, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"importing {tarball.name} into {node} failed: {out.stderr.strip()}")
