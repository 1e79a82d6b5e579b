"""Service environment variables for a pod, from Services the kubelet lists when it needs them.

Which Services and which variable names is `kubelet.service_env`'s rule (getServiceEnvVarMap
and envvars.FromServices); this module only fetches the Services.
The services are read with the kubelet's client (one list per namespace), cached for a few
seconds so a burst of container starts costs one request.
"""

from __future__ import annotations

import time
from typing import Any

from kube.api import Service
from kubelet.pod_objects import ObjectGetter
from kubelet.service_env import DEFAULT_NAMESPACE, service_env

__all__ = ["ServiceEnvironment"]

_CACHE_SECONDS = 5.0


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
        services = await self._services(DEFAULT_NAMESPACE)
        if enable_service_links and namespace != DEFAULT_NAMESPACE:
            services = [*services, *await self._services(namespace)]
        return service_env(namespace, enable_service_links=enable_service_links, services=services)
