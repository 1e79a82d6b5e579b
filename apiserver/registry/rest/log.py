"""pods/log: the one request the API server forwards to a kubelet, as in Kubernetes.

The container is the `container` query parameter, else the pod's only container, else the
`kubectl.kubernetes.io/default-container` annotation; otherwise 400 naming the choices.
The kubelet is found through the pod's node (InternalIP and
`status.daemonEndpoints.kubeletEndpoint.Port`) and reached over HTTPS: the API server
verifies the kubelet against the cluster CA and presents its own client certificate.
The body streams through unchanged (`follow=true` keeps it open), as text/plain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind
from apiserver.registry.rest.kubelet_client import KubeletClient
from kube.errors import ApiError, BadRequest, ServiceUnavailable

__all__ = ["LogStorage"]

_PASSED = ("follow", "tailLines", "timestamps", "previous", "sinceSeconds", "sinceTime", "limitBytes")


class LogStorage:
    """pods/log as a Connecter: GET streams the kubelet's answer through."""

    kind = Kind("", "v1", "Pod")
    connect_methods = ("GET",)

    def __init__(self, pods: RegistryStore, nodes: RegistryStore, kubelet: KubeletClient) -> None:
        self.pods, self.nodes, self.kubelet = pods, nodes, kubelet

    @staticmethod
    def container_for(pod: dict[str, Any], requested: str | None) -> str:
        spec = pod.get("spec") or {}
        names = [c.get("name") for c in spec.get("containers") or []]
        init = [c.get("name") for c in spec.get("initContainers") or []]
        name = pod["metadata"]["name"]
        if requested:
            if requested not in names and requested not in init:
                raise BadRequest(f"container {requested} is not valid for pod {name}")
            return requested
        if len(names) == 1:
            return str(names[0])
        default = ((pod["metadata"].get("annotations")) or {}).get("kubectl.kubernetes.io/default-container")
        if default in names:
            return str(default)
        raise BadRequest(f"a container name must be specified for pod {name}, choose one of: "
                         f"[{' '.join(str(n) for n in names)}]")

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        namespace = str(ctx.namespace)
        pod = await self.pods.get(namespace, name)
        container = self.container_for(pod, request.query_params.get("container"))
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise BadRequest(f"pod {name} does not have a host assigned")
        base = self.kubelet.base_url(*await self.kubelet.node_endpoint(self.nodes, node))
        params = {k: request.query_params[k] for k in _PASSED if k in request.query_params}
        url = f"{base}/containerLogs/{namespace}/{name}/{container}"
        req = self.kubelet.http.build_request("GET", url, params=params)
        try:
            resp = await self.kubelet.http.send(req, stream=True)
        except httpx.HTTPError as e:
            raise ServiceUnavailable(f"cannot reach the kubelet of node {node}: {e}") from None
        if resp.status_code >= 400:
            body = (await resp.aread()).decode(errors="replace").strip()
            await resp.aclose()
            raise ApiError(body or f"the kubelet answered {resp.status_code}", code=resp.status_code,
                           reason="NotFound" if resp.status_code == 404 else "BadRequest"
                           if resp.status_code == 400 else "InternalError")

        async def stream() -> AsyncIterator[bytes]:
            try:
                async for chunk in resp.aiter_raw():
                    yield chunk
            finally:
                await resp.aclose()

        return StreamingResponse(stream(), media_type="text/plain")
