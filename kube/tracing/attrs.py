"""The span attribute names picokube writes; one vocabulary for every component and the collector."""

from __future__ import annotations

__all__ = [
    "ACTOR", "APISERVER", "HOP", "NAME", "NODE", "OBJECT", "REACTED_EVENT", "REACTED_OBJECT", "REACTED_RV", "REASON",
    "RESOURCE_VERSION", "DELIVERED", "QUEUED", "SUBRESOURCE", "USER", "VERB",
]

ACTOR = "picokube.actor"
"""Who acted, by upstream's component names: `kube-apiserver`, `<name>-controller`, the
scheduler's name (`default-scheduler`), `kubelet/<node>`."""
APISERVER = "kube-apiserver"
"""The API server's actor name."""
HOP = "picokube.hop"
"""Set on a span that is one hop of the chain (a write served, a reconcile, a scheduling cycle, a pod sync)."""
VERB = "k8s.verb"
OBJECT = "k8s.object"
"""`Kind/namespace/name` of the object written (or reconciled)."""
SUBRESOURCE = "k8s.subresource"
NAME = "k8s.name"
"""The name in a request's path (empty for a create by generateName or a collection)."""
RESOURCE_VERSION = "k8s.resource_version"
"""The resourceVersion a write produced."""
USER = "k8s.user"
REACTED_EVENT = "picokube.reacted_to.event"
REACTED_OBJECT = "picokube.reacted_to.object"
REACTED_RV = "picokube.reacted_to.resource_version"
DELIVERED = "picokube.watch.delivered_unix"
"""When the watch event that woke the hop reached the component (unix seconds)."""
QUEUED = "picokube.queue.wait_seconds"
"""How long the key waited in the work queue before the hop started."""
NODE = "k8s.node"
REASON = "picokube.reason"
"""Why a hop could not do its job (the scheduler's `0/3 nodes are available: ...`)."""
