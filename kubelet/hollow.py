"""Many hollow nodes in one process: the scale-test kubelet (`--count N --node-name-prefix P`).

Mirrors kubemark's hollow nodes: each node `P1..PN` is a full `Kubelet` (its own Node, Lease
heartbeat, pod workers and simulated runtime with its own pod CIDR) but they share one API
client and one pod informer (every bound pod, routed by `spec.nodeName`), so a 1000-node
cluster costs one watch, not a thousand. Hollow nodes serve no kubelet HTTPS endpoint
(`kubectl logs` is not available for their pods) and need a kubeconfig allowed to act for
every node (cluster-admin), as kubemark's do. Nodes start a few milliseconds apart so their
registrations and heartbeats do not arrive in one burst.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import logging
import os

from kube.api import Pod
from kube.cache import InformerFactory
from kube.client import RESTClient
from kube.podcidr import node_cidrs, pod_capacity
from kubelet.config import KubeletConfig
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.kubelet import Kubelet
from kubelet.pod_source import PodRouter

__all__ = ["hollow_configs", "run_hollow_nodes"]

logger = logging.getLogger(__name__)

_STAGGER = 0.005
_BASE_NETWORK = ipaddress.ip_network("10.128.0.0/9")


def hollow_configs(base: KubeletConfig, count: int, prefix: str) -> list[KubeletConfig]:
    """One config per hollow node: names `prefix1..prefixN`, a subnet each out of 10.128.0.0/9
    sized to the node's pod capacity (a /24 up to 253 pods)."""
    subnets = iter(node_cidrs(str(_BASE_NETWORK), pod_capacity(base.capacity), count))
    return [dataclasses.replace(base, node_name=f"{prefix}{i}", pod_cidr=next(subnets), port=0,
                                root_dir=os.path.join(base.root_dir, f"{prefix}{i}"),
                                workers=2, relist_interval=max(base.relist_interval, 5.0),
                                housekeeping_interval=max(base.housekeeping_interval, 10.0))
            for i in range(1, count + 1)]


async def run_hollow_nodes(configs: list[KubeletConfig], client: RESTClient) -> None:
    """Run every hollow node until cancelled."""
    factory = InformerFactory(client)
    router = PodRouter(factory.informer_for(Pod, field_selector="spec.nodeName!="))
    kubelets = [Kubelet(c, client, SimulatedRuntime(pod_cidr=c.pod_cidr, start_delay=c.pod_start_delay),
                        runtime_name=RUNTIME_NAME, runtime_version=RUNTIME_VERSION, router=router)
                for c in configs]
    logger.info("Starting hollow nodes", extra={"count": len(kubelets)})

    async def start(i: int, kubelet: Kubelet) -> None:
        await asyncio.sleep(i * _STAGGER)
        await kubelet.run()

    async with asyncio.TaskGroup() as tg:
        tg.create_task(factory.run())
        for i, kubelet in enumerate(kubelets):
            tg.create_task(start(i, kubelet))
