"""Service environment variables: how a container finds Services (and the API server) by name.

Mirrors pkg/kubelet/envvars (FromServices) and kubelet_pods.go getServiceEnvVarMap:
- the `kubernetes` Service of the `default` namespace is always given, so in-cluster clients
  find the API server through KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT;
- with `enableServiceLinks` (the default), every Service of the pod's namespace too (one of
  that namespace named `kubernetes` replaces the API server's only outside `default`);
- a Service without a cluster IP (headless, ExternalName) gives nothing;
- per Service NAME (upper case, `-` as `_`): NAME_SERVICE_HOST, NAME_SERVICE_PORT (the first
  port), NAME_SERVICE_PORT_<PORTNAME> per named port, and the Docker link variables NAME_PORT,
  NAME_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}.
The services are read with the kubelet's client (one list per namespace), cached for a few
seconds so a burst of container starts costs one request.
"""

from __future__ import annotations

import time
from typing import Any

from kube.api import Service
from kubelet.pod_objects import ObjectGetter

__all__ = ["ServiceEnvironment", "service_env_vars"]

_CACHE_SECONDS = 5.0
_MASTER_NAMESPACE = "default"
_MASTER_SERVICES = frozenset({"kubernetes"})


def _env_name(name: str) -> str:
    return name.upper().replace("-", "_")


def service_env_vars(services: list[Service]) -> dict[str, str]:
    """The variables of `services`, in their order (FromServices)."""
    env: dict[str, str] = {}
    for svc in services:
        ip, ports = svc.spec.cluster_ip, svc.spec.ports or []
        if not ip or ip == "None" or not ports:
            continue
        name = _env_name(str(svc.metadata.name))
        env[f"{name}_SERVICE_HOST"] = ip
        env[f"{name}_SERVICE_PORT"] = str(ports[0].port)
        for p in ports:
            if p.name:
                env[f"{name}_SERVICE_PORT_{_env_name(p.name)}"] = str(p.port)
        first = ports[0]
        env[f"{name}_PORT"] = f"{(first.protocol or 'TCP').lower()}://{ip}:{first.port}"
        for p in ports:
            proto = p.protocol or "TCP"
            prefix = f"{name}_PORT_{p.port}_{proto.upper()}"
            env[prefix] = f"{proto.lower()}://{ip}:{p.port}"
            env[f"{prefix}_PROTO"] = proto.lower()
            env[f"{prefix}_PORT"] = str(p.port)
            env[f"{prefix}_ADDR"] = ip
    return env


class ServiceEnvironment:
    """Lists Services for pods' environments through the kubelet's client, briefly cached."""

    def __init__(self, client: ObjectGetter | None) -> None:
        self.client = client
        self._cache: dict[str, tuple[float, list[Service]]] = {}

    async def _services(self, namespace: str) -> list[Service]:
        now = time.monotonic()
        cached = self._cache.get(namespace)
        if cached is not None and now - cached[0] < _CACHE_SECONDS:
            return cached[1]
        if self.client is None:
            return []
        body: dict[str, Any] = await self.client.request("GET", Service.info.base_path(namespace))
        services = [Service.model_validate(item) for item in body.get("items") or []]
        services.sort(key=lambda s: str(s.metadata.name))
        self._cache[namespace] = (now, services)
        return services

    async def for_pod(self, namespace: str, *, enable_service_links: bool) -> dict[str, str]:
        """The pod's service variables (getServiceEnvVarMap); raises the API's error when listing fails."""
        chosen: dict[str, Service] = {}
        for svc in await self._services(_MASTER_NAMESPACE):
            if str(svc.metadata.name) in _MASTER_SERVICES:
                chosen[str(svc.metadata.name)] = svc
        if enable_service_links:
            for svc in await self._services(namespace):
                name = str(svc.metadata.name)
                if namespace != _MASTER_NAMESPACE or name not in _MASTER_SERVICES:
                    chosen[name] = svc
        return service_env_vars(list(chosen.values()))
