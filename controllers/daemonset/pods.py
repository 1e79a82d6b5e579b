"""Building a DaemonSet's pod for one node.

Mirrors CreatePodTemplate and the pod creation of syncNodes in pkg/controller/daemon: the
template's labels plus `controller-revision-hash=<current revision>` and the deprecated
`pod-template-generation=<template generation>` (the DaemonSet's
`deprecated.daemonset.template.generation` annotation), the template's annotations and finalizers,
`generateName: <ds-name>-`, the daemon tolerations (see `placement`), required node affinity
pinning it to the node, and the DaemonSet as its controller. `spec.nodeName` stays empty:
the scheduler binds the pod.
"""

from __future__ import annotations

from controllers.common.owner import new_controller_ref
from controllers.daemonset.history import REVISION_HASH_LABEL
from controllers.daemonset.placement import add_daemon_tolerations, pin_to_node
from kube.api import DaemonSet, ObjectMeta, Pod

__all__ = ["TEMPLATE_GENERATION_LABEL", "daemon_pod"]

TEMPLATE_GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def daemon_pod(ds: DaemonSet, *, node_name: str, hash_: str) -> Pod:
    """A new pod object for `ds` on `node_name` (the template is copied, never shared)."""
    template = ds.spec.template.model_copy(deep=True)
    labels = {**(template.metadata.labels or {}), REVISION_HASH_LABEL: hash_}
    if (generation := (ds.metadata.annotations or {}).get(TEMPLATE_GENERATION_ANNOTATION)) is not None:
        labels[TEMPLATE_GENERATION_LABEL] = generation
    spec = template.spec
    add_daemon_tolerations(spec)
    pin_to_node(spec, node_name)
    meta = ObjectMeta(generate_name=f"{ds.metadata.name}-", namespace=ds.metadata.namespace, labels=labels,
                      annotations=template.metadata.annotations, finalizers=template.metadata.finalizers,
                      owner_references=[new_controller_ref(ds)])
    return Pod(metadata=meta, spec=spec)
