"""The iptables-restore input a model renders to: kube-proxy's chains, names and rule shapes."""

from __future__ import annotations

import re
import time

from proxy.conntrack import stale_udp_flows
from proxy.iptables.rules import render_rules
from proxy.model import ProxyModel, build_model
from tests.proxy.builders import make_service, make_slice

NODE_PORT = [{"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080}]


def rules_of(text: str, table: str) -> list[str]:
    block = text.split(f"*{table}\n", 1)[1].split("COMMIT", 1)[0]
    return [line for line in block.splitlines() if line.startswith("-A ")]


def chain(rules: list[str], name: str) -> list[str]:
    return [r for r in rules if r.startswith(f"-A {name} ")]


def test_a_service_port_balances_evenly_over_its_endpoints_with_upstreams_chain_names() -> None:
    model = build_model([make_service("web")],
                        [make_slice("web", [("10.88.1.5", True), ("10.88.1.6", True), ("10.88.1.7", True)])])
    text = render_rules(model).text
    nat = rules_of(text, "nat")
    # kube-proxy's name for default/web:http over tcp: base32(sha256("default/web:httptcp"))[:16].
    svc = "KUBE-SVC-CDGGSHYLG3RE2FKL"
    assert ('-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp '
            f"--dport 80 -j {svc}") in nat
    jumps = chain(nat, svc)
    assert [re.findall(r"--probability (\S+)", r) for r in jumps] == [["0.3333333333"], ["0.5000000000"], []]
    seps = [r.rsplit(" ", 1)[1] for r in jumps]
    assert all(s.startswith("KUBE-SEP-") for s in seps) and len(set(seps)) == 3
    assert chain(nat, seps[0]) == [
        f'-A {seps[0]} -m comment --comment "default/web:http" -s 10.88.1.5/32 -j KUBE-MARK-MASQ',
        f'-A {seps[0]} -m comment --comment "default/web:http" -p tcp -m tcp -j DNAT --to-destination 10.88.1.5:8080']
    # The node-port jump is the last rule of KUBE-SERVICES, and masquerading is wired up.
    assert chain(nat, "KUBE-SERVICES")[-1].endswith("-m addrtype --dst-type LOCAL -j KUBE-NODEPORTS")
    assert chain(nat, "KUBE-MARK-MASQ") == ["-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000"]
    assert chain(nat, "KUBE-POSTROUTING")[-1].endswith("-j MASQUERADE --random-fully")
    assert rules_of(text, "filter") == chain(rules_of(text, "filter"), "KUBE-FORWARD") + \
        chain(rules_of(text, "filter"), "KUBE-FIREWALL")  # nothing rejected


def test_traffic_from_outside_the_cluster_cidr_to_a_cluster_ip_is_masqueraded() -> None:
    model = build_model([make_service("web")], [make_slice("web", [("10.88.1.5", True)])])
    nat = rules_of(render_rules(model, cluster_cidr="10.88.0.0/16").text, "nat")
    assert chain(nat, "KUBE-SVC-CDGGSHYLG3RE2FKL")[0] == (
        '-A KUBE-SVC-CDGGSHYLG3RE2FKL -m comment --comment "default/web:http cluster IP" ! -s 10.88.0.0/16 '
        "-d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ")
    assert not any("! -s" in r for r in rules_of(render_rules(model).text, "nat"))


def test_a_port_without_endpoints_is_rejected_in_the_filter_table() -> None:
    service = make_service("web", type_="NodePort", ports=NODE_PORT)
    text = render_rules(build_model([service], [make_slice("web", [("10.88.1.5", False)])])).text
    assert not any("default/web" in r for r in rules_of(text, "nat"))
    assert [r for r in rules_of(text, "filter") if "default/web" in r] == [
        '-A KUBE-SERVICES -m comment --comment "default/web:http has no endpoints" -d 10.96.0.10/32 -p tcp -m tcp '
        "--dport 80 -j REJECT",
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/web:http has no endpoints" -m addrtype '
        "--dst-type LOCAL -p tcp -m tcp --dport 30080 -j REJECT"]


def test_a_node_port_masquerades_and_joins_the_service_chain() -> None:
    service = make_service("web", type_="NodePort", ports=NODE_PORT)
    nat = rules_of(render_rules(build_model([service], [make_slice("web", [("10.88.1.5", True)])])).text, "nat")
    ext, svc = "KUBE-EXT-CDGGSHYLG3RE2FKL", "KUBE-SVC-CDGGSHYLG3RE2FKL"
    assert chain(nat, "KUBE-NODEPORTS") == [
        f'-A KUBE-NODEPORTS -m comment --comment "default/web:http" -p tcp -m tcp --dport 30080 -j {ext}']
    assert chain(nat, ext) == [
        f'-A {ext} -m comment --comment "masquerade traffic for default/web:http external destinations" '
        "-j KUBE-MARK-MASQ", f"-A {ext} -j {svc}"]


def test_local_policy_without_local_endpoints_drops_external_traffic_but_lets_pods_through() -> None:
    service = make_service("web", type_="NodePort", ports=NODE_PORT, externalTrafficPolicy="Local")
    slices = [make_slice("web", [("10.88.1.5", True)], node="node-1")]
    text = render_rules(build_model([service], slices, local_nodes=frozenset({"node-2"})),
                        cluster_cidr="10.88.0.0/16").text
    ext = chain(rules_of(text, "nat"), "KUBE-EXT-CDGGSHYLG3RE2FKL")
    assert [r.rsplit(" -j ", 1)[1] for r in ext] == ["KUBE-SVC-CDGGSHYLG3RE2FKL", "KUBE-MARK-MASQ",
                                                     "KUBE-SVC-CDGGSHYLG3RE2FKL"]
    assert any("has no local endpoints" in r and r.endswith("-j DROP") for r in rules_of(text, "filter"))
    local = render_rules(build_model([service], slices, local_nodes=frozenset({"node-1"}))).text
    assert chain(rules_of(local, "nat"), "KUBE-EXT-CDGGSHYLG3RE2FKL")[-1].endswith("-j KUBE-SVL-CDGGSHYLG3RE2FKL")


def test_client_ip_affinity_remembers_the_endpoint() -> None:
    service = make_service("web", sessionAffinity="ClientIP")
    nat = rules_of(render_rules(build_model([service], [make_slice("web", [("10.88.1.5", True)])])).text, "nat")
    [first, pick] = chain(nat, "KUBE-SVC-CDGGSHYLG3RE2FKL")
    sep = pick.rsplit(" ", 1)[1]
    assert f"-m recent --name {sep} --rcheck --seconds 10800 --reap -j {sep}" in first
    assert f"-m recent --name {sep} --set" in chain(nat, sep)[1]


def test_udp_and_sctp_ports_use_their_protocol_match() -> None:
    service = make_service("dns", ports=[{"name": "dns", "port": 53, "protocol": "UDP"},
                                         {"name": "s", "port": 99, "protocol": "SCTP"}])
    slices = [make_slice("dns", [("10.88.1.9", True)], port=53, port_name="dns", protocol="UDP", name="a"),
              make_slice("dns", [("10.88.1.9", True)], port=99, port_name="s", protocol="SCTP", name="b")]
    nat = rules_of(render_rules(build_model([service], slices)).text, "nat")
    assert any("-p udp -m udp --dport 53" in r for r in nat) and any("-p sctp -m sctp --dport 99" in r for r in nat)


def test_stale_service_chains_are_deleted_in_the_same_restore() -> None:
    model = build_model([make_service("web")], [make_slice("web", [("10.88.1.5", True)])])
    rules = render_rules(model, existing_chains=["PREROUTING", "KUBE-SERVICES", "KUBE-SVC-GONE", "KUBE-SEP-GONE",
                                                 "DOCKER"])
    assert "-X KUBE-SEP-GONE\n-X KUBE-SVC-GONE\nCOMMIT" in rules.text
    assert ":KUBE-SVC-GONE - [0:0]" in rules.text and "DOCKER" not in rules.text
    assert "KUBE-SVC-CDGGSHYLG3RE2FKL" in rules.chains and "KUBE-SVC-GONE" not in rules.chains
    assert render_rules(model).text == render_rules(model).text  # deterministic


def test_udp_flows_to_removed_endpoints_and_to_newly_backed_ports_are_cleared() -> None:
    service = make_service("dns", type_="NodePort", ports=[{"name": "dns", "port": 53, "protocol": "UDP",
                                                            "nodePort": 30053}])
    def model(*ips: str) -> ProxyModel:
        return build_model([service], [make_slice("dns", [(ip, True) for ip in ips], port=53, port_name="dns",
                                                  protocol="UDP")])
    assert stale_udp_flows(model(), model("10.88.1.9")) == [
        ("--orig-dst", "10.96.0.10", "-p", "udp", "--dport", "53"), ("-p", "udp", "--dport", "30053")]
    assert stale_udp_flows(model("10.88.1.9", "10.88.1.8"), model("10.88.1.9")) == [
        ("--orig-dst", "10.96.0.10", "-p", "udp", "--dst-nat", "10.88.1.8"),
        ("-p", "udp", "--dport", "30053", "--dst-nat", "10.88.1.8")]
    assert stale_udp_flows(model("10.88.1.9"), model("10.88.1.9")) == []


def _model_of(services: int, endpoints: int) -> ProxyModel:
    ports = [{"name": "http", "port": 80, "protocol": "TCP"}]
    svcs = [make_service(f"s-{i}", cluster_ip=f"10.97.{i // 250}.{i % 250 + 1}", ports=ports) for i in range(services)]
    slices = [make_slice(f"s-{i}", [(f"10.244.{k // 250}.{k % 250 + 1}", True)
                                    for k in range(i * endpoints, (i + 1) * endpoints)], name=f"s-{i}-1")
              for i in range(services)]
    return build_model(svcs, slices)


def _best_render_seconds(model: ProxyModel) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        render_rules(model, cluster_cidr="10.244.0.0/16")
        best = min(best, time.perf_counter() - start)
    return best


def test_rendering_grows_linearly_with_the_endpoints() -> None:
    """Ten times the Services and endpoints cost about ten times the rendering, not a hundred
    (a sync at 1000 Services of 10 endpoints renders 11000 chains)."""
    small, large = _model_of(100, 10), _model_of(1000, 10)
    ratio = _best_render_seconds(large) / _best_render_seconds(small)
    assert ratio < 20, f"rendering 10x the endpoints took {ratio:.0f}x as long"
