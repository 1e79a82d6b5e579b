"""The compose HA variant's join path, outside Docker: the init step writes a join token and the
CA's hash, the one-shot `picokube.compose.bootstrap` stores the token and cluster-info in a real
cluster, and a machine holding only those two files joins and becomes Ready; a restarted node
keeps the certificate it was issued instead of spending the token again."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.process import Process
from picokube.compose.init import JOIN_HASH_FILE, JOIN_TOKEN_FILE, write_join_files
from picokube.compose.node import has_usable_certificate
from picokube.join import JoinConfig

pytestmark = pytest.mark.e2e

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")


def _server(cluster: Cluster) -> str:
    return str(yaml.safe_load(cluster.kubeconfig.read_text())["clusters"][0]["cluster"]["server"])


def _bootstrap(cluster: Cluster, join_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "picokube.compose.bootstrap", "--kubeconfig", str(cluster.kubeconfig),
                           "--server", _server(cluster), "--join-dir", str(join_dir), "--timeout", "30", *extra],
                          check=False, capture_output=True, text=True, timeout=60)


def _secret_expiration(cluster: Cluster, token_id: str) -> str:
    secret = json.loads(cluster.kubectl_ok("get", "secret", "-n", "kube-system", f"bootstrap-token-{token_id}",
                                           "-o", "json"))
    return base64.b64decode(secret["data"]["expiration"]).decode()


def test_a_node_joins_with_only_the_token_and_the_ca_hash(cluster: Cluster, tmp_path: Path) -> None:
    join_dir = tmp_path / "join"
    token = write_join_files(join_dir, (cluster.data_dir / "pki" / "ca.crt").read_bytes())
    assert write_join_files(join_dir, (cluster.data_dir / "pki" / "ca.crt").read_bytes()) == token  # kept
    assert (join_dir / JOIN_TOKEN_FILE).stat().st_mode & 0o777 == 0o600

    first = _bootstrap(cluster, join_dir)
    assert first.returncode == 0, first.stderr
    token_id = token.split(".")[0]
    expires = dt.datetime.fromisoformat(_secret_expiration(cluster, token_id).replace("Z", "+00:00"))
    assert dt.timedelta(hours=23) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(hours=24)
    again = _bootstrap(cluster, join_dir, "--ttl", "48h")  # a second `up` gives the token a fresh lifetime
    assert again.returncode == 0, again.stderr
    assert _secret_expiration(cluster, token_id) != expires.strftime("%Y-%m-%dT%H:%M:%SZ")

    config = JoinConfig(server=_server(cluster), token=token,
                        ca_cert_hash=(join_dir / JOIN_HASH_FILE).read_text().strip(), node_name="compose-joined",
                        runtime="simulated", data_dir=tmp_path / "node")
    assert not has_usable_certificate(config)
    node = Process([sys.executable, "-m", "picokube", "join", "--server", config.server, "--token", config.token,
                    "--discovery-token-ca-cert-hash", config.ca_cert_hash, "--node-name", config.node_name,
                    "--runtime", "simulated", "--data-dir", str(config.data_dir)], log_path=tmp_path / "join.log")
    node.start()
    try:
        eventually_sync(lambda: cluster.kubectl("wait", "--for=condition=Ready", "node/compose-joined",
                                                "--timeout", "1s").returncode == 0,
                        timeout=90, message="compose-joined Ready")
        csrs = [line for line in cluster.kubectl_ok("get", "csr").splitlines()
                if f"system:bootstrap:{token_id}" in line]
        assert csrs and csrs[0].split()[-1] == "Approved,Issued", csrs
    finally:
        node.stop()

    # A restarted node keeps its certificate; one from another cluster (another CA) is not kept.
    assert has_usable_certificate(config)
    other_ca = dataclasses.replace(config, ca_cert_hash="sha256:" + "0" * 64)
    assert not has_usable_certificate(other_ca)


def test_bootstrap_refuses_a_join_dir_without_a_token(cluster: Cluster, tmp_path: Path) -> None:
    (tmp_path / "join").mkdir()
    (tmp_path / "join" / JOIN_TOKEN_FILE).write_text("not-a-token\n")
    out = _bootstrap(cluster, tmp_path / "join")
    assert out.returncode == 2 and "holds no bootstrap token" in out.stderr
