"""A StatefulSet pod's identity: its name NAME-ORDINAL, its labels, hostname and subdomain.

Mirrors stateful_set_utils.go: a pod belongs to a set when its name is the set's name, a dash
and a non-negative ordinal; it carries `statefulset.kubernetes.io/pod-name`,
`apps.kubernetes.io/pod-index` and the `controller-revision-hash` of the revision its
template came from; its hostname is its name and its subdomain the set's serviceName.
"""

from __future__ import annotations

import re

from controllers.common.owner import new_controller_ref
from kube.api import ObjectMeta, Pod, PodTemplateSpec, StatefulSet

__all__ = ["POD_INDEX_LABEL", "POD_NAME_LABEL", "REVISION_LABEL", "new_pod", "ordinal_of", "pod_revision",
           "split_by_ordinal", "start_ordinal"]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"

_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def ordinal_of(set_name: str, pod: Pod) -> int | None:
    """The pod's ordinal when its name makes it a member of the set named `set_name`, else None."""
    match = _ORDINAL.match(pod.metadata.name or "")
    return int(match.group(2)) if match and match.group(1) == set_name else None


def start_ordinal(sts: StatefulSet) -> int:
    return (sts.spec.ordinals.start or 0) if sts.spec.ordinals is not None else 0


def split_by_ordinal(sts: StatefulSet, pods: list[Pod]) -> tuple[dict[int, Pod], list[Pod]]:
    """(ordinal -> pod within start..start+replicas-1, the other members highest ordinal first)."""
    start, name = start_ordinal(sts), sts.metadata.name or ""
    want = sts.spec.replicas if sts.spec.replicas is not None else 1
    replicas: dict[int, Pod] = {}
    condemned: list[tuple[int, Pod]] = []
    for pod in pods:
        ordinal = ordinal_of(name, pod)
        if ordinal is not None and start <= ordinal < start + want:
            replicas[ordinal] = pod
        elif ordinal is not None:
            condemned.append((ordinal, pod))
    return replicas, [p for _, p in sorted(condemned, key=lambda item: -item[0])]


def pod_revision(pod: Pod) -> str:
    return (pod.metadata.labels or {}).get(REVISION_LABEL, "")


def new_pod(sts: StatefulSet, template: PodTemplateSpec, ordinal: int, revision: str) -> Pod:
    """The pod with `ordinal`, built from `template` (the one of `revision`)."""
    name = f"{sts.metadata.name}-{ordinal}"
    copied = template.model_copy(deep=True)
    labels = {**(copied.metadata.labels or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
              REVISION_LABEL: revision}
    spec = copied.spec.model_copy(update={"hostname": name, "subdomain": sts.spec.service_name or None})
    meta = ObjectMeta(name=name, namespace=sts.metadata.namespace, labels=labels,
                      annotations=copied.metadata.annotations, finalizers=copied.metadata.finalizers,
                      owner_references=[new_controller_ref(sts)])
    return Pod(metadata=meta, spec=spec)
