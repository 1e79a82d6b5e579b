"""`python -m kubelet.cri.reset ENDPOINT`: stop and remove every pod sandbox of a CRI runtime.

What `picokube down` runs against a node's private containerd before stopping it, so no
container outlives the cluster (containerd's shims keep containers running after the daemon
exits). Exit status 0 when the runtime is empty afterwards, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import sys

from kubelet.cri.interface import CRIError
from kubelet.cri.remote import RemoteRuntime

__all__ = ["reset"]


async def reset(endpoint: str) -> int:
    """Remove every sandbox (and so every container); return how many are left."""
    runtime = RemoteRuntime(endpoint, log_root="/nonexistent")
    try:
        for sandbox in await runtime.list_pod_sandbox():
            await runtime.stop_pod_sandbox(sandbox.id)
            await runtime.remove_pod_sandbox(sandbox.id)
        return len(await runtime.list_pod_sandbox())
    finally:
        await runtime.close()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m kubelet.cri.reset ENDPOINT", file=sys.stderr)
        return 2
    try:
        left = asyncio.run(reset(argv[0]))
    except CRIError as e:
        print(f"reset failed: {e}", file=sys.stderr)
        return 1
    return 0 if left == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
