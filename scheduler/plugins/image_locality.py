"""ImageLocality: prefer nodes that already have the pod's images, weighted by how rare they are.

Mirrors kube-scheduler `plugins/imagelocality`: for each container image present on the node
(from `status.images`), add its size scaled by the share of nodes that have it (an image on
every node says little about this one); the sum is clamped between 23 MB and 1000 MB per
container and mapped onto 0..100. Image names compare normalized: `busybox`,
`busybox:latest` and `docker.io/library/busybox:latest` are one image.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.images import normalized_image_name
from scheduler.framework.interfaces import MAX_SCORE, Status

__all__ = ["ImageLocality", "NAME"]

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_STATE_KEY = "PreScore" + NAME


class ImageLocality:
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        wanted = [normalized_image_name(c.image) for c in pod.spec.containers if c.image]
        spread = {name: sum(1 for info in nodes if name in info.images) for name in set(wanted)}
        if not any(spread.values()):
            return Status.skip()  # no node has any of the images: nothing to prefer
        state.write(_STATE_KEY, (wanted, spread, len(nodes)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        cached = state.get(_STATE_KEY)
        if cached is None:
            self.pre_score(state, pod, [node_info], [node_info])
            cached = state.get(_STATE_KEY) or ([], {}, 1)
        wanted, spread, total = cached
        images = node_info.images
        total_size = sum(images[name] * spread[name] / max(total, 1) for name in wanted if name in images)
        containers = max(1, len(pod.spec.containers))
        high = MAX_CONTAINER_THRESHOLD * containers
        clamped = min(max(total_size, MIN_THRESHOLD), high)
        return int(MAX_SCORE * (clamped - MIN_THRESHOLD) / (high - MIN_THRESHOLD))


def new(args: Mapping[str, Any]) -> ImageLocality:
    return ImageLocality()
