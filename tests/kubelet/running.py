"""A kubelet on the simulated runtime, running against the test API server as one node.

Shared by the kubelet tests so each states only the configuration it cares about; the
kubelet's root dir always defaults to the test's own directory, never the host's
/var/lib/kubelet.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from kube.testing.apiserver import ApiServerHarness
from kubelet.config import FIELD_MANAGER, KubeletConfig
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.kubelet import Kubelet

__all__ = ["running_kubelet"]


@contextlib.asynccontextmanager
async def running_kubelet(api: ApiServerHarness, root: Path, *, node: str, pod_cidr: str,
                          **config: Any) -> AsyncIterator[tuple[Kubelet, SimulatedRuntime]]:
    """Run `Kubelet.run()` as `node` until the block ends; `config` are further KubeletConfig fields."""
    settings: dict[str, Any] = {"relist_interval": 0.2, "housekeeping_interval": 0.5,
                                "root_dir": str(root / "kubelet"), **config}
    runtime = SimulatedRuntime(pod_cidr=pod_cidr)
    async with api.client(node, field_manager=FIELD_MANAGER) as client:
        k = Kubelet(KubeletConfig(node_name=node, pod_cidr=pod_cidr, **settings), client, runtime,
                    runtime_name=RUNTIME_NAME, runtime_version=RUNTIME_VERSION, kubelet_port=10250)
        task = asyncio.create_task(k.run())
        try:
            yield k, runtime
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
