"""The environment a pod's containers get from Services: `KUBERNETES_SERVICE_HOST` and docker links.

Mirrors the kubelet's getServiceEnvVarMap (pkg/kubelet/kubelet_pods.go) and
pkg/kubelet/envvars. The Services that count are:
- `kubernetes` in `default`, always, whatever `enableServiceLinks` says: with the token and
  CA the ServiceAccount admission mounts, `KUBERNETES_SERVICE_HOST`/`_PORT` are what a
  client's in-cluster configuration reads;
- every Service of the pod's own namespace when `enableServiceLinks` is true (its default),
  a same-named one there winning over `default/kubernetes`.
Headless Services (clusterIP `None`) and those without an address count for nothing.

For each Service `my-svc` with cluster IP A and first port P (protocol T, TCP when unset):
`MY_SVC_SERVICE_HOST=A`, `MY_SVC_SERVICE_PORT=P`, `MY_SVC_SERVICE_PORT_<NAME>=port` for every
named port, and docker's link variables: `MY_SVC_PORT=t://A:P`, and per port
`MY_SVC_PORT_<port>_<T>=t://A:port` with `_PROTO`, `_PORT` and `_ADDR`. Names are upper-cased
with `-` as `_`; an IPv6 address is bracketed in the URLs.

How the kubelet uses this (makeEnvironmentVariables): the container's own `envFrom` and `env`
come first and may refer to these in `$(VAR)`; afterwards every one of these whose name the
container did not define is added. Pure functions; safe to call from any task.
"""

from __future__ import annotations

from collections.abc import Iterable

from kube.api import Pod, Service

__all__ = ["enable_service_links", "env_from_services", "service_env", "service_env_for_pod"]

MASTER_SERVICES = frozenset({"kubernetes"})
DEFAULT_NAMESPACE = "default"


def service_env(namespace: str, *, enable_service_links: bool, services: Iterable[Service]) -> dict[str, str]:
    """The variables for a pod in `namespace`, from all the Services the kubelet knows."""
    chosen: dict[str, Service] = {}
    for service in services:
        if not _has_cluster_ip(service):
            continue
        name, ns = service.metadata.name or "", service.metadata.namespace or ""
        if ns == DEFAULT_NAMESPACE and name in MASTER_SERVICES:
            chosen.setdefault(name, service)
        elif ns == namespace and enable_service_links:
            chosen[name] = service
    return dict(env_from_services(chosen[name] for name in sorted(chosen)))


def service_env_for_pod(pod: Pod, services: Iterable[Service]) -> dict[str, str]:
    """`service_env` for this pod's namespace and its `enableServiceLinks`."""
    return service_env(pod.metadata.namespace or DEFAULT_NAMESPACE, enable_service_links=enable_service_links(pod),
                       services=services)


def enable_service_links(pod: Pod) -> bool:
    """The pod's `spec.enableServiceLinks`; unset means true, as the API server defaults it."""
    value = getattr(pod.spec, "enable_service_links", None)
    if value is None:
        value = (pod.spec.model_extra or {}).get("enableServiceLinks")
    return value is not False


def env_from_services(services: Iterable[Service]) -> list[tuple[str, str]]:
    """envvars.FromServices: every Service's variables, in order (Services without an address skipped)."""
    out: list[tuple[str, str]] = []
    for service in services:
        ports = service.spec.ports or []
        if not _has_cluster_ip(service) or not ports:
            continue
        ip, prefix = str(service.spec.cluster_ip), _env_name(service.metadata.name or "")
        out.append((f"{prefix}_SERVICE_HOST", ip))
        out.append((f"{prefix}_SERVICE_PORT", str(ports[0].port)))
        out.extend((f"{prefix}_SERVICE_PORT_{_env_name(p.name)}", str(p.port)) for p in ports if p.name)
        for i, port in enumerate(ports):
            protocol = (port.protocol or "TCP").upper()
            url = f"{protocol.lower()}://{_host_port(ip, port.port)}"
            if i == 0:
                out.append((f"{prefix}_PORT", url))
            port_prefix = f"{prefix}_PORT_{port.port}_{protocol}"
            out += [(port_prefix, url), (f"{port_prefix}_PROTO", protocol.lower()),
                    (f"{port_prefix}_PORT", str(port.port)), (f"{port_prefix}_ADDR", ip)]
    return out


def _has_cluster_ip(service: Service) -> bool:
    return service.spec.cluster_ip not in (None, "", "None")


def _env_name(name: str) -> str:
    return name.replace("-", "_").upper()


def _host_port(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
