"""`picokube up` preparation and refusals; the running cluster is covered by tests/e2e."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from apiserver.storage.encryption_config import load_encryption_config
from kube.netutil import host_address
from kube.testing.ports import free_port
from picokube.config import ClusterConfig
from picokube.state import cluster_lock
from picokube.tokens import read_token_file
from picokube.up import component_specs, prepare

from .conftest import REPO_ROOT, python_env, run_cli


def test_prepare_writes_every_file_and_reuses_credentials(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, port=7443, nodes=2)
    tokens = prepare(config)

    for name in ("kubeconfig", "controller-manager.kubeconfig", "scheduler.kubeconfig", "kube-proxy.kubeconfig",
                 "kube-dns.kubeconfig", "kubelet-node-1.kubeconfig", "kubelet-node-2.kubeconfig", "tokens.csv",
                 "encryption-config.yaml"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, name
    for name in ("ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "apiserver-etcd-client.crt",
                 "apiserver-etcd-client.key", "etcd/ca.crt", "etcd/ca.key", "etcd/server.crt", "etcd/server.key",
                 "etcd/peer.crt", "etcd/peer.key", "etcd/healthcheck-client.crt", "etcd/healthcheck-client.key"):
        assert (tmp_path / "pki" / name).exists(), name
    node = yaml.safe_load((tmp_path / "kubelet-node-2.kubeconfig").read_text())
    assert node["users"][0] == {"name": "system:node:node-2", "user": {"token": tokens["system:node:node-2"]}}
    assert node["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:7443"
    assert {e.user for e in read_token_file(tmp_path / "tokens.csv")} == set(tokens)
    assert ClusterConfig.load(tmp_path) == config

    ca = (tmp_path / "pki" / "ca.crt").read_bytes()
    encryption = (tmp_path / "encryption-config.yaml").read_bytes()
    assert prepare(config) == tokens
    assert (tmp_path / "pki" / "ca.crt").read_bytes() == ca
    assert (tmp_path / "encryption-config.yaml").read_bytes() == encryption  # the key that opens stored Secrets


def test_prepare_writes_an_encryption_config_that_seals_secrets(tmp_path: Path) -> None:
    prepare(ClusterConfig(data_dir=tmp_path, port=7443, nodes=1))
    config = load_encryption_config(tmp_path / "encryption-config.yaml")
    secrets = config.transformer_for("secrets", "")
    assert secrets is not None and config.transformer_for("configmaps", "") is None
    stored = secrets.transform_to_storage(b"password", "/registry/secrets/default/s")
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:") and b"password" not in stored


def test_every_private_key_and_its_directory_is_private(tmp_path: Path) -> None:
    """Keys, tokens, the encryption key and kubeconfigs are 0600, the directories holding them 0700,
    whatever the umask or an earlier run left behind."""
    data_dir = tmp_path / "data"
    (data_dir / "pki" / "etcd").mkdir(parents=True, mode=0o755)
    data_dir.chmod(0o755)
    prepare(ClusterConfig(data_dir=data_dir, nodes=2))

    secrets = [p for p in data_dir.rglob("*") if p.is_file() and (
        p.suffix in (".key", ".kubeconfig") or p.name in ("kubeconfig", "tokens.csv", "encryption-config.yaml"))]
    assert len([p for p in secrets if p.suffix == ".key"]) >= 10  # CAs, serving, client, etcd, sa
    for path in secrets:
        assert path.stat().st_mode & 0o777 == 0o600, path
    for path in (data_dir, data_dir / "pki", data_dir / "pki" / "etcd", data_dir / "etcd"):
        assert path.stat().st_mode & 0o777 == 0o700, path
    for cert in data_dir.rglob("*.crt"):
        assert cert.stat().st_mode & 0o077 in (0o044, 0o000), cert  # certificates are public, never writable


TRACING = ("--tracing", "true")  # on by default, exported to the API server's own collector


def test_component_argv_follow_the_component_clis(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, port=7443, etcd_port=7379, nodes=2,
                           node_capacity="cpu=2,memory=4Gi,pods=20")
    specs = {s.name: s for s in component_specs(config)}

    assert list(specs) == ["etcd", "apiserver", "controller-manager", "scheduler",
                           "kubelet-node-1", "kubelet-node-2", "kube-proxy-node-1", "kube-proxy-node-2", "kube-dns"]
    etcd = specs["etcd"].argv
    assert "--listen-client-urls=https://127.0.0.1:7379" in etcd
    assert "--advertise-client-urls=https://127.0.0.1:7379" in etcd
    assert "--listen-peer-urls=https://127.0.0.1:7380" in etcd
    assert {"--client-cert-auth=true", f"--trusted-ca-file={tmp_path}/pki/etcd/ca.crt",
            f"--cert-file={tmp_path}/pki/etcd/server.crt", f"--key-file={tmp_path}/pki/etcd/server.key",
            "--peer-client-cert-auth=true", f"--peer-trusted-ca-file={tmp_path}/pki/etcd/ca.crt",
            f"--peer-cert-file={tmp_path}/pki/etcd/peer.crt", f"--peer-key-file={tmp_path}/pki/etcd/peer.key",
            } <= set(etcd)
    # No plain-HTTP listener of any kind: no http URL, no separate metrics listener.
    assert not [a for a in etcd if "http://" in a or a.startswith("--listen-metrics-urls")]
    assert specs["apiserver"].argv == (
        sys.executable, "-m", "apiserver", "--etcd-endpoints", "https://127.0.0.1:7379",
        "--etcd-cafile", f"{tmp_path}/pki/etcd/ca.crt", "--etcd-certfile", f"{tmp_path}/pki/apiserver-etcd-client.crt",
        "--etcd-keyfile", f"{tmp_path}/pki/apiserver-etcd-client.key", "--bind-address", "0.0.0.0", "--port", "7443",
        "--workers", "1",
        "--tls-cert-file", f"{tmp_path}/pki/apiserver.crt", "--tls-private-key-file", f"{tmp_path}/pki/apiserver.key",
        "--client-ca-file", f"{tmp_path}/pki/ca.crt", "--token-auth-file", f"{tmp_path}/tokens.csv",
        "--kubelet-client-certificate", f"{tmp_path}/pki/apiserver-kubelet-client.crt",
        "--kubelet-client-key", f"{tmp_path}/pki/apiserver-kubelet-client.key",
        "--service-account-signing-key-file", f"{tmp_path}/pki/sa.key", "--authorization-mode", "Node,RBAC",
        "--enable-bootstrap-token-auth", "--audit-log-path", f"{tmp_path}/logs/audit.log",
        "--trace-store-file", f"{tmp_path}/traces.jsonl",
        *TRACING, "--service-cluster-ip-range", "10.96.0.0/12", "--service-node-port-range", "30000-32767",
        "--encryption-provider-config", f"{tmp_path}/encryption-config.yaml")
    assert specs["controller-manager"].argv == (
        sys.executable, "-m", "controllers", "--kubeconfig", f"{tmp_path}/controller-manager.kubeconfig",
        "--root-ca-file", f"{tmp_path}/pki/ca.crt", "--default-storage-class", "standard", *TRACING,
        "--cluster-signing-cert-file", f"{tmp_path}/pki/ca.crt", "--cluster-signing-key-file", f"{tmp_path}/pki/ca.key")
    assert specs["scheduler"].argv == (
        sys.executable, "-m", "scheduler", "--kubeconfig", f"{tmp_path}/scheduler.kubeconfig", *TRACING)
    assert specs["kubelet-node-2"].argv == (
        sys.executable, "-m", "kubelet", "--kubeconfig", f"{tmp_path}/kubelet-node-2.kubeconfig",
        "--node-name", "node-2", "--runtime", "simulated", "--root-dir", f"{tmp_path}/kubelets/node-2",
        "--node-capacity", "cpu=2,memory=4Gi,pods=20",
        "--pod-cidr", "10.244.2.0/24", "--tls-cert-file", f"{tmp_path}/pki/kubelet-node-2.crt",
        "--tls-private-key-file", f"{tmp_path}/pki/kubelet-node-2.key", "--client-ca-file", f"{tmp_path}/pki/ca.crt",
        *TRACING, "--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local",
        "--local-volume-dir", f"{tmp_path}/nodes/node-2/volumes")
    assert specs["kube-proxy-node-2"].argv == (
        sys.executable, "-m", "proxy", "--kubeconfig", f"{tmp_path}/kube-proxy.kubeconfig",
        "--hostname-override", "node-2", "--proxy-mode", "simulated", "--cluster-cidr", "10.244.0.0/16",
        "--healthz-bind-address", "127.0.0.1:0", "--status-file", f"{tmp_path}/proxy/node-2.json", *TRACING)
    assert specs["kube-proxy-node-1"].after_stop is None  # nothing to clean up on simulated nodes
    assert specs["kube-dns"].argv == (
        sys.executable, "-m", "clusterdns", "--kubeconfig", f"{tmp_path}/kube-dns.kubeconfig",
        "--cluster-domain", "cluster.local", "--service-ip", "10.96.0.10", "--dns-bind-address", host_address(),
        "--dns-port", "0", *TRACING)
    assert specs["etcd"].ready is not None and specs["apiserver"].ready is not None


def test_external_etcd_is_not_started(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, etcd_endpoints=("https://10.0.0.1:2379", "http://10.0.0.2:2379"))
    specs = component_specs(config)
    assert specs[0].name == "apiserver"
    assert "https://10.0.0.1:2379,http://10.0.0.2:2379" in specs[0].argv
    assert not [a for a in specs[0].argv if a.startswith("--etcd-") and a not in ("--etcd-endpoints",)]


def test_external_https_etcd_gets_the_given_client_certificate(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, etcd_endpoints=("https://10.0.0.1:2379",), etcd_cafile="/e/ca.crt",
                           etcd_certfile="/e/c.crt", etcd_keyfile="/e/c.key")
    argv = component_specs(config)[0].argv
    i = argv.index("--etcd-endpoints")
    assert argv[i:i + 8] == ("--etcd-endpoints", "https://10.0.0.1:2379", "--etcd-cafile", "/e/ca.crt",
                             "--etcd-certfile", "/e/c.crt", "--etcd-keyfile", "/e/c.key")
    assert ClusterConfig.from_json(config.to_json()) == config


def test_etcd_client_files_are_refused_without_external_etcd(tmp_path: Path) -> None:
    result = run_cli("up", "--data-dir", str(tmp_path), "--etcd-cafile", "/e/ca.crt")
    assert result.returncode != 0 and "are for --etcd-endpoints" in result.stderr
    result = run_cli("up", "--data-dir", str(tmp_path), "--etcd-endpoints", "https://10.0.0.1:2379",
                     "--etcd-certfile", "/e/c.crt")
    assert result.returncode != 0 and "--etcd-certfile and --etcd-keyfile must be given together" in result.stderr


def test_up_explains_why_the_cri_runtime_cannot_run(tmp_path: Path) -> None:
    env = {**python_env(), "PATH": str(tmp_path)}  # no containerd on this PATH
    result = subprocess.run([sys.executable, "-m", "picokube", "up", "--data-dir", str(tmp_path), "--runtime",
                             "cri"], capture_output=True, text=True, env=env, timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 1
    assert "the cri runtime cannot run here: containerd is not installed" in result.stderr
    assert "use --runtime simulated" in result.stderr


def test_cri_nodes_get_their_own_containerd_bridge_and_subnet(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, nodes=2, runtime="cri")
    specs = {s.name: s for s in component_specs(config)}
    assert [n for n in specs if n.startswith("containerd-")] == ["containerd-node-1", "containerd-node-2"]
    names = list(specs)
    assert names.index("containerd-node-2") < names.index("kubelet-node-1")  # runtimes first
    for i, node in enumerate(("node-1", "node-2"), start=1):
        root = tmp_path / "containerd" / node
        config_toml = (root / "config.toml").read_text()
        assert f'address = "{root}/containerd.sock"' in config_toml and "restrict_oom_score_adj = true" in config_toml
        net = json.loads((root / "cni/net.d/10-picokube.conflist").read_text())
        assert net["plugins"][0]["bridge"] == f"pkbr{i}"
        assert net["plugins"][0]["ipam"]["ranges"] == [[{"subnet": f"10.88.{i}.0/24"}]]
        kubelet = specs[f"kubelet-{node}"].argv
        assert kubelet[kubelet.index("--container-runtime-endpoint") + 1] == f"unix://{root}/containerd.sock"
        assert kubelet[kubelet.index("--pod-cidr") + 1] == f"10.88.{i}.0/24"
        assert sorted(p.name for p in (root / "images").glob("*.tar")) == [
            "docker.io_library_busybox_latest.tar", "registry.local_pause_busybox.tar"]
        proxy = specs[f"kube-proxy-{node}"].argv
        assert proxy[proxy.index("--proxy-mode") + 1] == "iptables"
        assert proxy[proxy.index("--cluster-cidr") + 1] == "10.88.0.0/16"  # every node's pod subnet
    # The first node's proxy stops last; after it, whatever rules are left are removed.
    assert specs["kube-proxy-node-1"].after_stop is not None and specs["kube-proxy-node-2"].after_stop is None


def test_up_names_a_port_that_is_taken(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_cli("up", "--data-dir", str(tmp_path), "--port", str(port), "--etcd-port", str(free_port()),
                         "--detach", "--timeout", "5")
    assert result.returncode == 1
    assert f"port {port}" in result.stderr
    assert not (tmp_path / "state.json").exists()


def test_up_refuses_while_a_supervisor_holds_the_data_dir(tmp_path: Path) -> None:
    with cluster_lock(tmp_path):
        result = run_cli("up", "--data-dir", str(tmp_path), "--detach")
    assert result.returncode == 1
    assert "already running" in result.stderr


def test_up_rejects_a_malformed_node_capacity(tmp_path: Path) -> None:
    result = run_cli("up", "--data-dir", str(tmp_path), "--node-capacity", "cpu")
    assert result.returncode == 1
    assert "--node-capacity" in result.stderr


def test_status_without_a_cluster_fails(tmp_path: Path) -> None:
    result = run_cli("status", "--data-dir", str(tmp_path), "-o", "json")
    assert result.returncode != 0
    assert "No picokube cluster state" in result.stderr


def test_several_controller_managers_and_schedulers_are_leader_election_candidates(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, nodes=1, controller_managers=2, schedulers=2)
    prepare(config)
    specs = {s.name: s for s in component_specs(config)}
    assert {"controller-manager", "controller-manager-2", "scheduler", "scheduler-2"} <= set(specs)
    assert specs["controller-manager-2"].argv == specs["controller-manager"].argv
    assert specs["scheduler-2"].argv == specs["scheduler"].argv
    assert not any("--leader-elect=false" in s.argv for s in specs.values())  # electing is the default


def test_node_pod_subnets_fit_the_pod_capacity(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, nodes=2, node_capacity="cpu=4,pods=600")
    assert config.simulated_pod_cidrs() == ["10.244.4.0/22", "10.244.8.0/22"]
    with pytest.raises(ValueError, match=r"pods=600 needs a /22 pod subnet per node; the cluster CIDR "
                                         r"10\.244\.0\.0/16 holds 63 of them, not 70"):
        ClusterConfig(data_dir=tmp_path, nodes=70, node_capacity="cpu=4,pods=600")
