"""The in-tree plugins and the default profile that enables them.

Mirrors kube-scheduler `plugins/registry.go`: a plugin is reachable by name through
`IN_TREE_REGISTRY` (name -> factory), and a profile lists which names run. Adding a plugin
is one file here plus one line in the registry (and in `DEFAULT_PLUGINS` to enable it).
"""

from __future__ import annotations

from scheduler.framework.interfaces import PluginFactory
from scheduler.plugins import node_name, node_ready, node_resources_fit, node_unschedulable

__all__ = ["IN_TREE_REGISTRY", "DEFAULT_PLUGINS", "DEFAULT_SCORE_WEIGHTS"]

IN_TREE_REGISTRY: dict[str, PluginFactory] = {
    node_name.NAME: node_name.new,
    node_unschedulable.NAME: node_unschedulable.new,
    node_ready.NAME: node_ready.new,
    node_resources_fit.NAME: node_resources_fit.new,
}

# Cheap, unresolvable checks first: filters stop at the first plugin that rejects a node.
DEFAULT_PLUGINS: tuple[str, ...] = (node_name.NAME, node_unschedulable.NAME, node_ready.NAME,
                                    node_resources_fit.NAME)
DEFAULT_SCORE_WEIGHTS: dict[str, int] = {node_resources_fit.NAME: 1}
