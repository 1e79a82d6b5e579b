"""A node's pod CIDR sized to the pods it may run, carved from the cluster's CIDR.

Upstream's node IPAM controller gives every node a subnet of `--node-cidr-mask-size` (a /24
by default) and a kubelet whose `maxPods` exceeds it fails pods one by one once addresses run
out. Here the rule lives once: `picokube up` sizes each node's subnet to its pod capacity
(`node_cidrs`), and the kubelet refuses at start a capacity its subnet cannot address
(`check_pod_capacity`), so neither fault is silent.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Mapping

from kube.quantity import to_int

__all__ = ["RESERVED_ADDRESSES", "check_pod_capacity", "mask_size_for", "node_cidrs", "pod_capacity",
           "usable_addresses"]

RESERVED_ADDRESSES = 3
"""Addresses of an IPv4 pod subnet never handed to a pod: the network, the gateway, the broadcast."""

DEFAULT_MAX_PODS = 110
"""The kubelet's `maxPods` when a capacity names no pods."""

DEFAULT_MASK_SIZE = 24
"""Upstream's `--node-cidr-mask-size` for IPv4: the smallest subnet a node gets here."""


def usable_addresses(cidr: str) -> int:
    """How many pods a node with this pod CIDR can give an address to."""
    network = ipaddress.ip_network(cidr, strict=False)
    return max(0, network.num_addresses - RESERVED_ADDRESSES)


def mask_size_for(pods: int) -> int:
    """The longest IPv4 prefix (never longer than a /24) whose subnet addresses `pods` pods."""
    mask = DEFAULT_MASK_SIZE
    while mask > 0 and (1 << (32 - mask)) - RESERVED_ADDRESSES < pods:
        mask -= 1
    return mask


def node_cidrs(cluster_cidr: str, pods: int, count: int) -> list[str]:
    """`count` disjoint node subnets of `cluster_cidr`, each big enough for `pods` pods.

    The cluster CIDR's first subnet is left unused (10.244.1.0/24 is the first node's, as
    before). Raises ValueError naming the figures when the cluster CIDR cannot hold them.
    """
    cluster = ipaddress.ip_network(cluster_cidr, strict=False)
    mask = mask_size_for(pods)
    if mask < cluster.prefixlen:
        raise ValueError(f"--node-capacity pods={pods} needs a /{mask} pod subnet per node, "
                         f"larger than the cluster CIDR {cluster}")
    available = (1 << (mask - cluster.prefixlen)) - 1
    if count > available:
        raise ValueError(f"--node-capacity pods={pods} needs a /{mask} pod subnet per node; the cluster CIDR "
                         f"{cluster} holds {available} of them, not {count}")
    return [str(s) for s in itertools.islice(cluster.subnets(new_prefix=mask), 1, count + 1)]


def check_pod_capacity(cidr: str, pods: int) -> None:
    """ValueError unless a node with this pod CIDR can address `pods` pods at once."""
    usable = usable_addresses(cidr)
    if pods > usable:
        raise ValueError(f"--pod-cidr {cidr} has addresses for {usable} pods, fewer than the node's capacity of "
                         f"{pods} pods: give a larger --pod-cidr (a /{mask_size_for(pods)}) or a smaller pods capacity")


def pod_capacity(capacity: Mapping[str, str]) -> int:
    """The pods a node's capacity admits (the kubelet's default 110 when it names none)."""
    return to_int(capacity["pods"]) if "pods" in capacity else DEFAULT_MAX_PODS
