"""How the API server reaches a kubelet: found through its Node, over mutual TLS.

Mirrors pkg/kubelet/client: a kubelet is addressed by its Node's InternalIP and
`status.daemonEndpoints.kubeletEndpoint.Port`, verified against the cluster CA (by
signature; kubelets are addressed by IP, so names are not checked) and shown the API server's
own kubelet-client certificate. pods/log uses the HTTP client; exec, attach, port-forward and
nodes/proxy open raw connections with the same TLS settings.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx

from apiserver.registry.generic import RegistryStore
from kube.errors import NotFound, ServiceUnavailable
from kube.httpstream import SocketStream

__all__ = ["KubeletClient", "open_connection"]

_CONNECT_TIMEOUT = 10.0


async def open_connection(host: str, port: int, *, tls: ssl.SSLContext | None, what: str) -> SocketStream:
    """A connection to host:port (TLS with `tls`); ServiceUnavailable naming `what` when it cannot be made."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls else None), _CONNECT_TIMEOUT)
    except (TimeoutError, OSError, ssl.SSLError) as e:
        raise ServiceUnavailable(f"error dialing backend: {what}: {e or type(e).__name__}") from None
    return SocketStream(reader, writer)


class KubeletClient:
    """The API server's client side of every kubelet connection."""

    def __init__(self, *, client_cert: str | None, client_key: str | None, ca_file: str | None) -> None:
        ctx = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        ctx.check_hostname = False  # kubelets are addressed by IP; the CA signature is what is checked
        if client_cert and client_key:
            ctx.load_cert_chain(client_cert, client_key)
        self.tls = ctx
        self.http = httpx.AsyncClient(verify=ctx, timeout=httpx.Timeout(10.0, read=None))

    async def close(self) -> None:
        await self.http.aclose()

    @staticmethod
    def endpoint(node: dict[str, Any]) -> tuple[str, int]:
        """The kubelet's (address, port) as its Node publishes them; ServiceUnavailable when it does not."""
        status = node.get("status") or {}
        port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint")) or {}).get("Port")
        address = next((a.get("address") for a in status.get("addresses") or [] if a.get("type") == "InternalIP"),
                       None)
        if not port or not address:
            raise ServiceUnavailable(f"the kubelet of node {node['metadata']['name']} does not publish an endpoint")
        return str(address), int(port)

    async def node_endpoint(self, nodes: RegistryStore, node_name: str) -> tuple[str, int]:
        try:
            node = await nodes.get(None, node_name)
        except NotFound:
            raise ServiceUnavailable(f'node "{node_name}" not found') from None
        return self.endpoint(node)

    @staticmethod
    def base_url(address: str, port: int) -> str:
        host = f"[{address}]" if ":" in address else address
        return f"https://{host}:{port}"

    async def connect(self, address: str, port: int) -> SocketStream:
        """A raw TLS connection to the kubelet at address:port."""
        return await open_connection(address, port, tls=self.tls, what=f"kubelet {address}:{port}")
