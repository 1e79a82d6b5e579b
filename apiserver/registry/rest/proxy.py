"""pods/proxy, services/proxy and nodes/proxy: HTTP (and upgrades) carried to a pod, a Service, a kubelet.

The object name may carry a scheme and a port, as upstream's `[scheme:]name[:port]`
(`https:web:8443`); the rest of the request path after `/proxy` and the query go to the
backend unchanged:
- a pod: its IP, at the given port or its first declared container port (`http` by default;
  `https` is not verified, as upstream does not verify pods);
- a Service: a ready address of its Endpoints, at the endpoint port matching the Service port
  named or numbered in the name (503 `no endpoints available for service "x"` otherwise);
- a node: its kubelet over mutual TLS at the published kubelet port (or plain HTTP at another
  port the name gives).
Verbs are the HTTP method's (`get`, `create`, `update`, `patch`, `delete` on `.../proxy`).
"""

from __future__ import annotations

import random
import ssl
from typing import Any
from urllib.parse import unquote

import httpx
from starlette.requests import Request
from starlette.responses import Response

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind
from apiserver.registry.rest.kubelet_client import KubeletClient, open_connection
from apiserver.registry.rest.upgrade import ProxyTransport, forward_http, upgrade_to
from kube.errors import BadRequest, NotFound, ServiceUnavailable
from kube.httpstream import is_upgrade

__all__ = ["PodProxyStorage", "ServiceProxyStorage", "NodeProxyStorage", "split_scheme_name_port", "proxy_path"]

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


def split_scheme_name_port(id_: str) -> tuple[str, str, str]:
    """`[scheme:]name[:port]` as upstream's SplitSchemeNamePort; BadRequest when malformed."""
    parts = id_.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
        if scheme not in ("http", "https"):
            raise BadRequest(f"invalid scheme {scheme!r} in {id_!r}")
    else:
        raise BadRequest(f"invalid request {id_!r}")
    if not name:
        raise BadRequest(f"invalid request {id_!r}")
    return scheme, name, port


def proxy_path(request: Request, name: str) -> str:
    """The path after `{name}/proxy` in the request, still percent-encoded, starting with "/"."""
    raw = request.scope.get("raw_path") or request.scope["path"].encode()
    segments = raw.decode("latin-1").split("/")
    for i in range(len(segments) - 1):
        if unquote(segments[i]) == name and segments[i + 1] == "proxy":
            return "/" + "/".join(segments[i + 2:])
    return "/"


def _target(request: Request, name: str) -> str:
    query = request.scope.get("query_string", b"").decode("latin-1")
    return proxy_path(request, name) + (f"?{query}" if query else "")


def _host(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


class _Proxy:
    """What the three proxies share: relaying to an (scheme, address, port) they each locate."""

    connect_methods = _METHODS

    def __init__(self, kind: str, transport: ProxyTransport) -> None:
        self.kind = Kind("", "v1", kind)
        self.transport = transport

    async def relay(self, request: Request, scheme: str, address: str, port: int, target: str,
                    *, tls: ssl.SSLContext | None = None, client: httpx.AsyncClient | None = None) -> Response:
        host = _host(address, port)
        if is_upgrade(request.scope):
            context = (tls or self.transport.tls) if scheme == "https" else None
            backend = await open_connection(address, port, tls=context, what=host)
            return await upgrade_to(request, backend, target, host=host)
        return await forward_http(request, client or self.transport.http, f"{scheme}://{host}{target}")


class PodProxyStorage(_Proxy):
    def __init__(self, pods: RegistryStore, transport: ProxyTransport) -> None:
        super().__init__("PodProxyOptions", transport)
        self.pods = pods

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        scheme, pod_name, port = split_scheme_name_port(name)
        pod = await self.pods.get(str(ctx.namespace), pod_name)
        if not port:
            declared = [p.get("containerPort") for c in (pod.get("spec") or {}).get("containers") or []
                        for p in c.get("ports") or []]
            port = str(declared[0]) if declared else "80"
        if not port.isdigit():
            raise BadRequest(f"invalid port {port!r} for pod {pod_name}")
        ip = (pod.get("status") or {}).get("podIP")
        if not ip:
            raise ServiceUnavailable(f"pod {pod_name} has no IP address yet")
        return await self.relay(request, scheme or "http", str(ip), int(port), _target(request, name))


def _endpoint(service: dict[str, Any], endpoints: dict[str, Any], port: str) -> tuple[str, int]:
    """A ready (address, port) of `endpoints` for the Service port named or numbered `port`."""
    wanted = port
    if port.isdigit():
        wanted = next((str(p.get("name") or "") for p in (service.get("spec") or {}).get("ports") or []
                       if str(p.get("port")) == port), port)
    subsets = list(endpoints.get("subsets") or [])
    random.shuffle(subsets)
    for subset in subsets:
        addresses = subset.get("addresses") or []
        if not addresses:
            continue
        for p in subset.get("ports") or []:
            if str(p.get("name") or "") == wanted:
                return str(random.choice(addresses)["ip"]), int(p["port"])
    raise ServiceUnavailable(f'no endpoints available for service "{service["metadata"]["name"]}"')


class ServiceProxyStorage(_Proxy):
    def __init__(self, services: RegistryStore, endpoints: RegistryStore, transport: ProxyTransport) -> None:
        super().__init__("ServiceProxyOptions", transport)
        self.services, self.endpoints = services, endpoints

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        scheme, service_name, port = split_scheme_name_port(name)
        namespace = str(ctx.namespace)
        service = await self.services.get(namespace, service_name)
        try:
            endpoints = await self.endpoints.get(namespace, service_name)
        except NotFound:
            raise ServiceUnavailable(f'no endpoints available for service "{service_name}"') from None
        address, target_port = _endpoint(service, endpoints, port)
        return await self.relay(request, scheme or "http", address, target_port, _target(request, name))


class NodeProxyStorage(_Proxy):
    def __init__(self, nodes: RegistryStore, kubelet: KubeletClient, transport: ProxyTransport) -> None:
        super().__init__("NodeProxyOptions", transport)
        self.nodes, self.kubelet = nodes, kubelet

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        scheme, node_name, port = split_scheme_name_port(name)
        node = await self.nodes.get(None, node_name)
        address, kubelet_port = self.kubelet.endpoint(node)
        target = _target(request, name)
        if not port or port == str(kubelet_port):
            return await self.relay(request, "https", address, kubelet_port, target, tls=self.kubelet.tls,
                                    client=self.kubelet.http)
        if not port.isdigit():
            raise BadRequest(f"invalid port {port!r} for node {node_name}")
        return await self.relay(request, scheme or "http", address, int(port), target)
