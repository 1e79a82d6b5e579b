"""`picokube join`: make this machine a node of a running cluster with one command.

As `kubeadm join` with token discovery, in order:
1. learn the cluster CA from the server's cluster-info ConfigMap and check it against
   `--discovery-token-ca-cert-hash` (`discovery.py`); a mismatch ends here;
2. authenticate with the bootstrap token as `system:bootstrap:<id>` and ask for a client
   certificate for `system:node:<name>` (a CSR the controller-manager approves and signs);
   a refused token (401) ends here;
3. write the node's kubeconfig (`<data-dir>/kubelet.kubeconfig`, the certificate and key
   inline) and run, in the foreground under a supervisor, the kubelet and the node's proxy
   with it;
4. renew the certificate at 70-90% of its life with a new CSR authenticated by the current
   certificate, rewrite the kubeconfig, and restart the kubelet and proxy so they use it.
Ctrl-C (or `picokube down --data-dir DIR`) stops everything.
"""

from __future__ import annotations

import datetime as dt
import logging
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from kube.client.config import ClientConfig, load_kubeconfig
from picokube.certificate_manager import request_node_certificate, rotation_deadline, write_node_kubeconfig
from picokube.discovery import discover_ca
from picokube.state import read_state, signal_group
from picokube.supervisor import ComponentSpec, Supervisor
from picokube.up import python_env

__all__ = ["JoinConfig", "bootstrap_node", "run_join"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JoinConfig:
    server: str
    token: str
    ca_cert_hash: str
    node_name: str
    runtime: str
    data_dir: Path
    node_capacity: str | None = None
    pod_cidr: str = "10.244.100.0/24"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubelet.kubeconfig"

    @property
    def ca_file(self) -> Path:
        return self.data_dir / "pki" / "ca.crt"


def bootstrap_node(config: JoinConfig) -> None:
    """Steps 1-2 and the kubeconfig of step 3; DiscoveryError/CertificateError say why not."""
    ca_pem = discover_ca(config.server, config.ca_cert_hash)
    (config.data_dir / "pki").mkdir(parents=True, exist_ok=True, mode=0o700)
    config.ca_file.write_bytes(ca_pem)
    print(f"[discovery] Cluster CA verified ({config.ca_cert_hash})", flush=True)
    bootstrap = ClientConfig(server=config.server.rstrip("/"), token=config.token, ca_data=ca_pem)
    cert, key = request_node_certificate(bootstrap, config.node_name)
    write_node_kubeconfig(config.kubeconfig, server=config.server.rstrip("/"), ca_pem=ca_pem, node=config.node_name,
                          cert_pem=cert, key_pem=key)
    print(f"[kubelet-start] Client certificate issued for system:node:{config.node_name}", flush=True)


def _components(config: JoinConfig) -> list[ComponentSpec]:
    env, node = python_env(), config.node_name
    kubelet = (sys.executable, "-m", "kubelet", "--kubeconfig", str(config.kubeconfig), "--node-name", node,
               "--runtime", config.runtime, "--root-dir", str(config.data_dir / "kubelet"),
               "--pod-cidr", config.pod_cidr, "--client-ca-file", str(config.ca_file),
               *(("--node-capacity", config.node_capacity) if config.node_capacity else ()))
    proxy = (sys.executable, "-m", "proxy", "--kubeconfig", str(config.kubeconfig), "--hostname-override", node,
             "--proxy-mode", "iptables" if config.runtime == "cri" else "simulated",
             "--healthz-bind-address", "127.0.0.1:0")
    return [ComponentSpec(f"kubelet-{node}", kubelet, env=env, cwd=config.data_dir),
            ComponentSpec(f"kube-proxy-{node}", proxy, env=env, cwd=config.data_dir)]


def _rotate_forever(config: JoinConfig, stop: threading.Event) -> None:
    """Renew the client certificate before it expires; restart the node's processes on it."""
    while not stop.is_set():
        current = load_kubeconfig(config.kubeconfig)
        assert current.client_cert_data is not None
        wait = (rotation_deadline(current.client_cert_data) - dt.datetime.now(dt.UTC)).total_seconds()
        if stop.wait(max(wait, 0.0)):
            return
        try:
            cert, key = request_node_certificate(current, config.node_name)
        except Exception as e:  # noqa: BLE001 - a loop boundary: retry in a while
            logger.warning("Rotating the client certificate failed, will retry: %s", e)
            stop.wait(30.0)
            continue
        assert current.ca_data is not None
        write_node_kubeconfig(config.kubeconfig, server=current.server, ca_pem=current.ca_data,
                              node=config.node_name, cert_pem=cert, key_pem=key)
        logger.info("Rotated the client certificate of system:node:%s; restarting the kubelet and proxy",
                    config.node_name)
        for comp in (read_state(config.data_dir) or {}).get("components", []):
            if isinstance(comp.get("pid"), int):
                signal_group(comp["pid"], signal.SIGTERM)


def run_join(config: JoinConfig) -> int:
    """Bootstrap, then supervise the node until stopped; the exit code."""
    bootstrap_node(config)
    stop = threading.Event()
    rotator = threading.Thread(target=_rotate_forever, args=(config, stop), name="certificate-rotation", daemon=True)
    rotator.start()
    supervisor = Supervisor(data_dir=config.data_dir, components=_components(config),
                            info={"apiserver": config.server, "kubeconfig": str(config.kubeconfig),
                                  "nodes": [config.node_name], "joined": True})
    try:
        return supervisor.run()
    finally:
        stop.set()
