"""ImageLocality: prefer nodes that already have the pod's images, weighted by how rare they are.

Mirrors kube-scheduler `plugins/imagelocality`: for each container image present on the node
(from `status.images`), add its size scaled by the share of nodes that have it (an image on
every node says little about this one); the sum is clamped between 23 MB and 1000 MB per
container and mapped onto 0..100. Image names compare normalized: `busybox`,
`busybox:latest` and `docker.io/library/busybox:latest` are one image.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_SCORE, Status

__all__ = ["ImageLocality", "NAME", "normalized_image_name"]

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_STATE_KEY = "PreScore" + NAME


def normalized_image_name(name: str) -> str:
    """`docker.io/library/name:tag` form; a name without tag or digest gets `:latest`."""
    last = name.rsplit("/", 1)[-1]
    if "@" not in name and ":" not in last:
        name += ":latest"
    first, slash, rest = name.partition("/")
    if not slash:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name


def _node_images(node_info: NodeInfo) -> dict[str, int]:
    node = node_info.node
    images: dict[str, int] = {}
    for image in (node.status.images or []) if node is not None else []:
        for name in image.names or []:
            images[normalized_image_name(name)] = image.size_bytes or 0
    return images


class ImageLocality:
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        wanted = {normalized_image_name(c.image) for c in pod.spec.containers if c.image}
        spread: dict[str, int] = dict.fromkeys(wanted, 0)
        per_node: dict[str, dict[str, int]] = {}
        for info in nodes:
            images = _node_images(info)
            present = {name: images[name] for name in wanted if name in images}
            per_node[info.name] = present
            for name in present:
                spread[name] += 1
        state.write(_STATE_KEY, (per_node, spread, len(nodes)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        cached = state.get(_STATE_KEY)
        if cached is None:
            self.pre_score(state, pod, [node_info], [node_info])
            cached = state.get(_STATE_KEY)
        per_node, spread, total = cached
        present: dict[str, int] = per_node.get(node_info.name, {})
        total_size = sum(size * spread[name] / max(total, 1) for name, size in present.items())
        containers = max(1, len(pod.spec.containers))
        high = MAX_CONTAINER_THRESHOLD * containers
        clamped = min(max(total_size, MIN_THRESHOLD), high)
        return int(MAX_SCORE * (clamped - MIN_THRESHOLD) / (high - MIN_THRESHOLD))


def new(args: Mapping[str, Any]) -> ImageLocality:
    return ImageLocality()
