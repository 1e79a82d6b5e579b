"""Pod subnets sized to a node's pod capacity, carved disjointly from the cluster CIDR."""

from __future__ import annotations

import ipaddress

import pytest

from kube.podcidr import check_pod_capacity, mask_size_for, node_cidrs, pod_capacity, usable_addresses


def test_default_capacity_keeps_upstreams_slash_24() -> None:
    assert mask_size_for(110) == 24
    assert node_cidrs("10.244.0.0/16", 110, 3) == ["10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"]


def test_a_larger_capacity_gets_a_larger_subnet_that_fits_it() -> None:
    cidrs = node_cidrs("10.244.0.0/16", 600, 4)
    networks = [ipaddress.ip_network(c) for c in cidrs]
    assert all(n.prefixlen == 22 and usable_addresses(c) >= 600 for n, c in zip(networks, cidrs, strict=True))
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1:])


def test_a_cluster_cidr_too_small_is_refused_with_the_figures() -> None:
    with pytest.raises(ValueError, match=r"needs a /22 pod subnet per node; the cluster CIDR 10.244.0.0/16 holds 63"):
        node_cidrs("10.244.0.0/16", 600, 64)


def test_capacity_check_and_default_pods() -> None:
    check_pod_capacity("10.244.1.0/24", 253)
    with pytest.raises(ValueError, match="has addresses for 253 pods"):
        check_pod_capacity("10.244.1.0/24", 254)
    assert pod_capacity({"cpu": "4"}) == 110 and pod_capacity({"pods": "1k"}) == 1000
