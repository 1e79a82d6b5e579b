"""Kubeconfigs load in the official client; the token file parses and keeps its tokens."""

from __future__ import annotations

import base64
from pathlib import Path

import kubernetes
import yaml

from picokube.kubeconfig import write_kubeconfig
from picokube.pki import ensure_cluster_pki
from picokube.tokens import (
    Identity,
    cluster_identities,
    ensure_token_file,
    read_token_file,
)


def test_official_client_loads_the_kubeconfig(tmp_path: Path) -> None:
    pki = ensure_cluster_pki(tmp_path / "pki")
    path = write_kubeconfig(tmp_path / "kubeconfig", server="https://127.0.0.1:6443", ca_pem=pki.ca_pem(),
                            user="admin", token="s3cret")
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(path), client_configuration=cfg)
    assert cfg.host == "https://127.0.0.1:6443"
    assert "Bearer s3cret" in cfg.api_key.values()  # the key name differs between client versions
    assert cfg.ssl_ca_cert and Path(cfg.ssl_ca_cert).read_bytes() == pki.ca_pem()
    assert cfg.verify_ssl

    contexts, current = kubernetes.config.list_kube_config_contexts(config_file=str(path))
    assert current["name"] == "picokube" and [c["name"] for c in contexts] == ["picokube"]
    assert path.stat().st_mode & 0o777 == 0o600
    doc = yaml.safe_load(path.read_text())
    assert base64.b64decode(doc["clusters"][0]["cluster"]["certificate-authority-data"]) == pki.ca_pem()


def test_token_file_is_kube_apiserver_csv(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    entries = ensure_token_file(path, cluster_identities(["node-1", "node-2"]))

    lines = path.read_text().splitlines()
    assert len(lines) == 7  # admin, controller-manager, scheduler, proxy, DNS, two nodes
    admin = entries["admin"]
    assert lines[0] == f'{admin.token},admin,{admin.uid},"system:masters"'
    parsed = {e.user: e for e in read_token_file(path)}
    assert parsed["admin"].groups == ("system:masters",)
    assert parsed["system:kube-controller-manager"].groups == ()
    assert parsed["system:kube-scheduler"].groups == ()
    assert parsed["system:kube-proxy"].groups == ()
    assert parsed["system:kube-dns"].groups == ()
    assert parsed["system:node:node-2"].groups == ("system:nodes",)
    assert len({e.token for e in parsed.values()}) == len(lines)  # every identity its own token
    assert all(len(e.token) >= 43 for e in parsed.values())  # 32 random bytes, base64
    assert path.stat().st_mode & 0o777 == 0o600


def test_tokens_survive_a_rewrite_and_new_identities_get_new_ones(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    first = ensure_token_file(path, cluster_identities(["node-1"]))
    second = ensure_token_file(path, cluster_identities(["node-1", "node-2"]))
    for user, entry in first.items():
        assert second[user] == entry
    assert second["system:node:node-2"].token not in {e.token for e in first.values()}


def test_multiple_groups_are_quoted(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    ensure_token_file(path, [Identity("jane", ("dev", "ops"))])
    assert path.read_text().strip().endswith(',jane,' + read_token_file(path)[0].uid + ',"dev,ops"')
    assert read_token_file(path)[0].groups == ("dev", "ops")
