"""pods/log: the one request the API server forwards to a kubelet, as in Kubernetes.

The container is the `container` query parameter, else the pod's only container, else the
`kubectl.kubernetes.io/default-container` annotation; otherwise 400 naming the choices.
The kubelet is found through the pod's node (InternalIP and
`status.daemonEndpoints.kubeletEndpoint.Port`) and reached over HTTPS: the API server
verifies the kubelet against the cluster CA and presents its own client certificate.
The body streams through unchanged (`follow=true` keeps it open), as text/plain.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind
from kube.errors import ApiError, BadRequest, NotFound, ServiceUnavailable

__all__ = ["LogStorage"]

_PASSED = ("follow", "tailLines", "timestamps", "previous", "sinceSeconds", "sinceTime", "limitBytes")


class LogStorage:
    """pods/log as a Connecter: GET streams the kubelet's answer through."""

    kind = Kind("", "v1", "Pod")
    connect_methods = ("GET",)

    def __init__(self, pods: RegistryStore, nodes: RegistryStore, *, client_cert: str | None, client_key: str | None,
                 ca_file: str | None) -> None:
        self.pods, self.nodes = pods, nodes
        ctx = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        ctx.check_hostname = False  # kubelets are addressed by IP; the CA signature is what is checked
        if client_cert and client_key:
            ctx.load_cert_chain(client_cert, client_key)
        self._http = httpx.AsyncClient(verify=ctx, timeout=httpx.Timeout(10.0, read=None))

    async def close(self) -> None:
        await self._http.aclose()

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

    async def kubelet_url(self, node_name: str) -> str:
        try:
            node = await self.nodes.get(None, node_name)
        except NotFound:
            raise ServiceUnavailable(f'node "{node_name}" not found') from None
        status = node.get("status") or {}
        port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint")) or {}).get("Port")
        address = next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == "InternalIP"),
                       None)
        if not port or not address:
            raise ServiceUnavailable(f"the kubelet of node {node_name} does not publish an endpoint")
        host = f"[{address}]" if ":" in str(address) else address
        return f"https://{host}:{port}"

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        namespace = str(ctx.namespace)
        pod = await self.pods.get(namespace, name)
        container = self.container_for(pod, request.query_params.get("container"))
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise BadRequest(f"pod {name} does not have a host assigned")
        base = await self.kubelet_url(node)
        params = {k: request.query_params[k] for k in _PASSED if k in request.query_params}
        req = self._http.build_request("GET", f"{base}/containerLogs/{namespace}/{name}/{container}", params=params)
        try:
            resp = await self._http.send(req, stream=True)
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
