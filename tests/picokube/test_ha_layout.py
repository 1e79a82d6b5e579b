"""The HA layout `picokube up --etcd-members N --apiservers N` plans: names, ports, data dirs,
the etcd cluster's flags, the balancer's configuration; and the default layout unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.storage.etcd_channel import cluster_endpoint, parse_endpoint
from picokube.balancer import haproxy_config
from picokube.config import ClusterConfig
from picokube.up import component_specs, etcd_specs


def test_default_layout_has_one_etcd_one_apiserver_and_no_balancer(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, port=6443, etcd_port=2379, nodes=0)
    names = [s.name for s in component_specs(config)]
    assert names[:2] == ["etcd", "apiserver"] and not any("lb" in n for n in names)
    assert config.etcd_urls == ("https://127.0.0.1:2379",)
    server = next(s for s in component_specs(config) if s.name == "apiserver").argv
    assert "--advertise-port" not in server
    assert server[server.index("--workers") + 1] == "1"


def test_apiserver_workers_reach_every_api_server(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, nodes=0, apiservers=2, apiserver_workers=3)
    servers = [s.argv for s in component_specs(config) if s.name.startswith("apiserver-") and s.name != "apiserver-lb"]
    assert len(servers) == 2 and all(argv[argv.index("--workers") + 1] == "3" for argv in servers)
    with pytest.raises(ValueError, match="--apiserver-workers"):
        ClusterConfig(data_dir=tmp_path, apiserver_workers=0)


def test_ha_layout_names_ports_and_flags(tmp_path: Path) -> None:
    config = ClusterConfig(data_dir=tmp_path, port=6443, etcd_port=2379, nodes=0, etcd_members=3, apiservers=2)
    specs = {s.name: s for s in component_specs(config)}
    assert [n for n in specs if "etcd" in n] == ["etcd-0", "etcd-1", "etcd-2"]
    assert config.etcd_urls == tuple(f"https://127.0.0.1:{p}" for p in (2379, 2381, 2383))
    assert config.apiserver_ports() == {"apiserver-0": 6444, "apiserver-1": 6445}
    assert "apiserver-lb" in specs and config.apiserver_url == "https://127.0.0.1:6443"
    member = specs["etcd-1"].argv
    assert "--initial-cluster=etcd-0=https://127.0.0.1:2380,etcd-1=https://127.0.0.1:2382," \
           "etcd-2=https://127.0.0.1:2384" in member
    assert f"--data-dir={tmp_path / 'etcd' / 'etcd-1'}" in member
    assert f"--cert-file={tmp_path / 'pki' / 'etcd' / 'etcd-1' / 'server.crt'}" in member
    server = specs["apiserver-1"].argv
    assert server[server.index("--port") + 1] == "6445"
    assert server[server.index("--advertise-port") + 1] == "6443"
    assert server[server.index("--etcd-endpoints") + 1] == ",".join(config.etcd_urls)
    # Only the last member gates what follows: members wait for each other to form the cluster.
    assert [s.ready is not None for s in etcd_specs(config)] == [False, False, True]


def test_bad_ha_flags_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--etcd-members"):
        ClusterConfig(data_dir=tmp_path, etcd_members=0)
    with pytest.raises(ValueError, match="--etcd-members"):
        ClusterConfig(data_dir=tmp_path, etcd_members=3, etcd_endpoints=("https://10.0.0.1:2379",))


def test_haproxy_passes_tcp_through_and_checks_readyz_over_tls(tmp_path: Path) -> None:
    text = haproxy_config(port=6443, servers={"apiserver-0": 6444, "apiserver-1": 6445}, ca_file=tmp_path / "ca.crt")
    assert "mode tcp" in text and "bind 0.0.0.0:6443" in text
    assert "option httpchk GET /readyz" in text and f"check-ssl verify required ca-file {tmp_path / 'ca.crt'}" in text
    assert "server apiserver-0 127.0.0.1:6444" in text and "server apiserver-1 127.0.0.1:6445" in text


def test_members_on_one_address_share_one_channel_target() -> None:
    members = [parse_endpoint(f"https://127.0.0.1:{p}") for p in (2379, 2381)]
    combined = cluster_endpoint(members)
    assert combined is not None and combined.target == "ipv4:127.0.0.1:2379,127.0.0.1:2381"
    assert cluster_endpoint(members[:1]) is None
    assert cluster_endpoint([parse_endpoint("https://etcd-0:2379"), parse_endpoint("https://etcd-1:2379")]) is None
