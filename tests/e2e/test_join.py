"""A machine joins a running cluster with a token: `picokube token create --print-join-command`,
then `picokube join` as its own process with its own data dir; the node becomes Ready with a
certificate issued through an approved CSR. Refusals: an unknown or expired token gets 401,
a wrong CA hash stops the join before any credential is sent."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.process import Process

pytestmark = pytest.mark.e2e

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")


def _join_command(cluster: Cluster, *extra: str) -> list[str]:
    out = cluster.picokube("token", "create", "--print-join-command", *extra)
    assert out.returncode == 0, out.stderr
    argv = shlex.split(out.stdout.strip())
    assert argv[:2] == ["picokube", "join"], out.stdout
    return [sys.executable, "-m", "picokube", *argv[1:]]


def _run(argv: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, "--data-dir", str(data_dir), "--runtime", "simulated"], check=False,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def joined(cluster: Cluster, tmp_path: Path) -> Iterator[Process]:
    argv = _join_command(cluster)
    node = Process([*argv, "--node-name", "joined-1", "--runtime", "simulated", "--data-dir", str(tmp_path / "node")],
                   log_path=tmp_path / "join.log")
    node.start()
    try:
        yield node
    finally:
        node.stop()


def _node_ready(cluster: Cluster, name: str) -> bool:
    out = cluster.kubectl("get", "node", name, "-o", "json")
    if out.returncode != 0:
        return False
    conditions = json.loads(out.stdout)["status"].get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_joined_node_becomes_ready_with_an_approved_certificate(cluster: Cluster, joined: Process) -> None:
    eventually_sync(lambda: _node_ready(cluster, "joined-1"), timeout=90, message="joined-1 Ready")
    csrs = cluster.kubectl_ok("get", "csr")
    lines = [line for line in csrs.splitlines() if "system:bootstrap:" in line]
    assert lines, csrs
    assert "kubernetes.io/kube-apiserver-client-kubelet" in lines[0] and lines[0].split()[-1] == "Approved,Issued"
    # The node acts as itself: a client certificate for system:node:joined-1 in system:nodes.
    node = json.loads(cluster.kubectl_ok("get", "node", "joined-1", "-o", "json"))
    assert node["metadata"]["name"] == "joined-1"


def test_unknown_and_expired_tokens_are_refused_with_401(cluster: Cluster, tmp_path: Path) -> None:
    argv = _join_command(cluster)
    token_at = argv.index("--token") + 1
    argv[token_at] = "abcdef.0123456789abcdef"
    unknown = _run([*argv, "--node-name", "nobody"], tmp_path / "unknown")
    assert unknown.returncode != 0 and "401" in unknown.stderr, unknown.stderr

    expired = _join_command(cluster, "--ttl", "1s")
    expired_token = expired[expired.index("--token") + 1]

    def refused() -> subprocess.CompletedProcess[str] | None:
        out = _run([*expired, "--node-name", "late"], tmp_path / "expired")
        return out if out.returncode != 0 else None
    result = eventually_sync(refused, timeout=30, message="expired token refused")
    assert "401" in result.stderr, result.stderr
    # The token cleaner removes the expired token.
    token_id = expired_token.split(".")[0]
    eventually_sync(lambda: cluster.kubectl("get", "secret", "-n", "kube-system",
                                            f"bootstrap-token-{token_id}").returncode != 0,
                    timeout=30, message="expired token deleted")


def test_wrong_ca_hash_stops_the_join(cluster: Cluster, tmp_path: Path) -> None:
    argv = _join_command(cluster)
    argv[argv.index("--discovery-token-ca-cert-hash") + 1] = "sha256:" + "0" * 64
    out = _run([*argv, "--node-name", "wrong"], tmp_path / "wrong")
    assert out.returncode != 0
    assert "cluster CA found in cluster-info ConfigMap is invalid" in out.stderr, out.stderr
    assert cluster.kubectl("get", "node", "wrong").returncode != 0


def test_kubectl_certificate_approve_and_deny(cluster: Cluster, tmp_path: Path) -> None:
    import base64

    from kube.csr import certificate_request, new_key

    def submit(name: str) -> None:
        pem = certificate_request(new_key(), common_name=f"user-{name}", organizations=("devs",))
        cluster.kubectl_ok("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["digital signature", "client auth"], "expirationSeconds": 86400}}))

    submit("alice")
    submit("mallory")
    assert cluster.kubectl_ok("get", "csr", "alice").split()[-1] == "Pending"
    cluster.kubectl_ok("certificate", "approve", "alice")
    cluster.kubectl_ok("certificate", "deny", "mallory")
    eventually_sync(lambda: cluster.kubectl_ok("get", "csr", "alice").split()[-1] == "Approved,Issued",
                    timeout=30, message="alice's certificate issued")
    header, row = cluster.kubectl_ok("get", "csr", "alice").splitlines()
    assert header.split() == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"]
    assert row.split()[2:] == ["kubernetes.io/kube-apiserver-client", "admin", "1d", "Approved,Issued"]
    assert cluster.kubectl_ok("get", "csr", "mallory").split()[-1] == "Denied"
