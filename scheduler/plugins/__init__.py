"""The in-tree plugins and the default profile that enables them.

Mirrors kube-scheduler `plugins/registry.go` and the v1 default profile: a plugin is
reachable by name through `IN_TREE_REGISTRY` (name -> factory), and a profile lists which
names run. Adding a plugin is one file here plus one line in the registry (and in
`DEFAULT_PLUGINS` to enable it). The default score weights are upstream's.
"""

from __future__ import annotations

from scheduler.framework.interfaces import PluginFactory
from scheduler.plugins import (
    balanced_allocation,
    default_preemption,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_ready,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    taint_toleration,
    volume_binding,
)

__all__ = ["IN_TREE_REGISTRY", "DEFAULT_PLUGINS", "DEFAULT_SCORE_WEIGHTS"]

IN_TREE_REGISTRY: dict[str, PluginFactory] = {
    node_name.NAME: node_name.new,
    node_unschedulable.NAME: node_unschedulable.new,
    node_ready.NAME: node_ready.new,
    taint_toleration.NAME: taint_toleration.new,
    node_affinity.NAME: node_affinity.new,
    node_ports.NAME: node_ports.new,
    node_resources_fit.NAME: node_resources_fit.new,
    pod_topology_spread.NAME: pod_topology_spread.new,
    inter_pod_affinity.NAME: inter_pod_affinity.new,
    default_preemption.NAME: default_preemption.new,
    balanced_allocation.NAME: balanced_allocation.new,
    image_locality.NAME: image_locality.new,
    volume_binding.NAME: volume_binding.new,
}

# Cheap, unresolvable checks first: filters stop at the first plugin that rejects a node.
DEFAULT_PLUGINS: tuple[str, ...] = (
    node_unschedulable.NAME, node_name.NAME, node_ready.NAME, taint_toleration.NAME, node_affinity.NAME,
    node_ports.NAME, node_resources_fit.NAME, volume_binding.NAME, pod_topology_spread.NAME,
    inter_pod_affinity.NAME,
    default_preemption.NAME, balanced_allocation.NAME, image_locality.NAME,
)
DEFAULT_SCORE_WEIGHTS: dict[str, int] = {
    taint_toleration.NAME: 3, node_affinity.NAME: 2, node_resources_fit.NAME: 1, pod_topology_spread.NAME: 2,
    inter_pod_affinity.NAME: 2, balanced_allocation.NAME: 1, image_locality.NAME: 1,
}
