"""What the Endpoints and EndpointSlice controllers both ask of a Service and its pods.

Mirrors k8s.io/endpointslice/util (ShouldPodBeInEndpoints, ShouldSetHostname,
podEndpointsChanged, GetServicesToUpdate) and FindPort, so both controllers agree on:
- which Services a pod belongs to: those in its namespace whose `spec.selector` (a plain
  label map) it matches; a Service without a selector, or with an empty one, selects
  nothing (its endpoints are written by someone else);
- which pods are endpoints at all: not finished (Succeeded/Failed), with an IP, and, unless
  the caller includes them, not terminating;
- which port a Service port reaches on a given pod: a numeric targetPort as is, a named one
  looked up per pod among its containers' (and sidecars') ports of the same protocol;
- which pod changes matter: labels, hostname/subdomain, readiness, deletion and IPs.
Everything here is pure and reads only what it is given.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping

from kube.api import Pod, Service, ServicePort
from kube.cache import EventHandler, SharedInformer
from kube.podutil import is_pod_ready, is_pod_terminal
from kube.workqueue import WorkQueue

__all__ = [
    "CLUSTER_IP_NONE",
    "LABEL_HEADLESS",
    "is_ipv6",
    "is_service_ip_set",
    "find_port",
    "pod_endpoints_changed",
    "pod_ips",
    "queue_services_on_changes",
    "selector_matches",
    "service_selector",
    "services_for_labels",
    "services_to_update",
    "should_pod_be_in_endpoints",
    "should_set_hostname",
]

CLUSTER_IP_NONE = "None"
"""`spec.clusterIP` of a headless Service."""

LABEL_HEADLESS = "service.kubernetes.io/headless"
"""Set (empty) on the Endpoints and EndpointSlices of a Service without a cluster IP."""


def service_selector(svc: Service) -> dict[str, str] | None:
    """The Service's selector, or None when it selects nothing (absent or empty)."""
    return svc.spec.selector or None


def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str] | None) -> bool:
    """A Service selector matches labels holding every one of its key=value pairs."""
    have = labels or {}
    return all(have.get(k) == v for k, v in selector.items())


def is_service_ip_set(svc: Service) -> bool:
    """True unless the Service is headless (clusterIP None) or has no IP yet."""
    return svc.spec.cluster_ip not in (None, "", CLUSTER_IP_NONE)


def is_ipv6(ip: str) -> bool | None:
    """True for an IPv6 address, False for IPv4, None for something that is not an IP."""
    try:
        return ipaddress.ip_address(ip).version == 6
    except ValueError:
        return None


def pod_ips(pod: Pod) -> list[str]:
    """`status.podIPs` in order, or `status.podIP` alone when the list is missing."""
    if pod.status.pod_ips:
        return [p.ip for p in pod.status.pod_ips]
    return [pod.status.pod_ip] if pod.status.pod_ip else []


def should_pod_be_in_endpoints(pod: Pod, *, include_terminating: bool) -> bool:
    """Whether a pod is an endpoint at all: running or about to, with an IP; terminating only if asked."""
    if is_pod_terminal(pod) or not pod_ips(pod):
        return False
    return include_terminating or pod.metadata.deletion_timestamp is None


def should_set_hostname(pod: Pod, svc: Service) -> bool:
    """A pod's hostname is published when its subdomain names this Service (headless DNS records)."""
    return bool(pod.spec.hostname) and pod.spec.subdomain == svc.metadata.name and \
        pod.metadata.namespace == svc.metadata.namespace


def find_port(pod: Pod, port: ServicePort) -> int | None:
    """The pod port a Service port targets, or None when a named targetPort is not on this pod.

    A named port matches a container port of that name and the Service port's protocol,
    in the regular containers and in sidecars (init containers with restartPolicy Always).
    """
    target = port.target_port if port.target_port is not None else port.port
    if isinstance(target, int):
        return target
    protocol = port.protocol or "TCP"
    containers = [*pod.spec.containers,
                  *(c for c in pod.spec.init_containers or [] if c.restart_policy == "Always")]
    for container in containers:
        for cp in container.ports or []:
            if cp.name == target and (cp.protocol or "TCP") == protocol:
                return cp.container_port
    return None


def pod_endpoints_changed(old: Pod, new: Pod) -> tuple[bool, bool]:
    """(the pod's endpoint may have changed, the Services it matches may have changed)."""
    labels_changed = (old.metadata.labels or {}) != (new.metadata.labels or {}) or \
        old.spec.hostname != new.spec.hostname or old.spec.subdomain != new.spec.subdomain
    pod_changed = old.metadata.deletion_timestamp != new.metadata.deletion_timestamp or \
        is_pod_ready(old) != is_pod_ready(new) or pod_ips(old) != pod_ips(new) or \
        is_pod_terminal(old) != is_pod_terminal(new) or old.spec.node_name != new.spec.node_name
    return pod_changed, labels_changed


def services_for_labels(services: Iterable[Service], labels: Mapping[str, str] | None) -> set[str]:
    """Keys of the Services (of the pod's namespace) whose selector matches these labels."""
    out: set[str] = set()
    for svc in services:
        selector = service_selector(svc)
        if selector is not None and selector_matches(selector, labels):
            out.add(svc.key)
    return out


def services_to_update(services: Iterable[Service], old: Pod, new: Pod) -> set[str]:
    """The Services whose endpoints a pod update may change (upstream GetServicesToUpdate).

    Nothing when neither the endpoint nor the membership changed; on a label change, the
    Services it joined or left, and all of them when the endpoint itself changed too.
    """
    if old.metadata.resource_version == new.metadata.resource_version:
        return set()
    pod_changed, labels_changed = pod_endpoints_changed(old, new)
    if not pod_changed and not labels_changed:
        return set()
    candidates = list(services)
    current = services_for_labels(candidates, new.metadata.labels)
    if not labels_changed:
        return current
    previous = services_for_labels(candidates, old.metadata.labels)
    return current | previous if pod_changed else current ^ previous


def queue_services_on_changes(services: SharedInformer[Service], pods: SharedInformer[Pod],
                              queue: WorkQueue[str]) -> None:
    """Queue a Service's key when it changes, and when a pod it selects (or selected) changes.

    The triggers both endpoint controllers share (upstream's onServiceUpdate/addPod/updatePod):
    handlers only compute keys from the caches and never block.
    """
    def in_namespace(namespace: str | None) -> list[Service]:
        return services.store.by_index("namespace", namespace or "")

    def on_service(svc: Service) -> None:
        queue.add(svc.key)

    def on_pod(pod: Pod) -> None:
        for key in services_for_labels(in_namespace(pod.metadata.namespace), pod.metadata.labels):
            queue.add(key)

    def on_pod_update(old: Pod, cur: Pod) -> None:
        for key in services_to_update(in_namespace(cur.metadata.namespace), old, cur):
            queue.add(key)

    services.add_event_handler(EventHandler(on_add=on_service, on_update=lambda _old, svc: on_service(svc),
                                            on_delete=on_service))
    pods.add_event_handler(EventHandler(on_add=on_pod, on_update=on_pod_update, on_delete=on_pod))
