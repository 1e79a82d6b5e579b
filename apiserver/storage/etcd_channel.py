"""How the API server reaches one etcd endpoint: a gRPC channel, over TLS for https URLs.

kube-apiserver talks to etcd over TLS with a client certificate (`--etcd-cafile`,
`--etcd-certfile`, `--etcd-keyfile`) whenever an `--etcd-servers` URL is https; this module
does the same for `--etcd-endpoints`. aetcd's own client dials plain gRPC only, so the
channel is built here and aetcd contributes only the generated stubs.

Guarantees:
- `parse_endpoint` accepts `http://host:port`, `https://host:port` and a bare `host:port`
  (plain, as etcdctl reads it) and raises ValueError naming the endpoint otherwise.
- An https endpoint is dialled with TLS: the server's certificate is checked against
  `EtcdTLSConfig.ca_file` (the system roots when none is given) and against the endpoint's
  host name or IP, and the client certificate is presented when one is configured. An http
  endpoint is dialled in the clear and the TLS files are not read.
- The TLS files are read when a channel is opened, so a reconnect after the files were
  renewed on disk uses the new ones; a missing or unreadable file raises OSError then.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
from aetcd import rpc

__all__ = ["EtcdChannel", "EtcdEndpoint", "EtcdTLSConfig", "cluster_endpoint", "parse_endpoint"]

DEFAULT_CLIENT_PORT = 2379


@dataclass(frozen=True)
class EtcdTLSConfig:
    """The API server's side of etcd's TLS: the CA that signed etcd's serving certificate and
    the client certificate etcd's `--client-cert-auth` asks for (both PEM files)."""

    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("--etcd-certfile and --etcd-keyfile must be given together")

    def credentials(self) -> grpc.ChannelCredentials:
        """gRPC channel credentials from the files; OSError when one cannot be read."""
        return grpc.ssl_channel_credentials(
            root_certificates=self.ca_file.read_bytes() if self.ca_file else None,
            private_key=self.key_file.read_bytes() if self.key_file else None,
            certificate_chain=self.cert_file.read_bytes() if self.cert_file else None,
        )


@dataclass(frozen=True)
class EtcdEndpoint:
    url: str
    host: str
    port: int
    secure: bool
    other_ports: tuple[int, ...] = ()
    """More members on the same IPv4 address (`cluster_endpoint`)."""

    @property
    def target(self) -> str:
        """The gRPC target: IPv6 literals in brackets, as gRPC's resolver reads them; several
        members as one `ipv4:` address list, which gRPC's pick_first walks through."""
        if self.other_ports:
            return "ipv4:" + ",".join(f"{self.host}:{p}" for p in (self.port, *self.other_ports))
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def cluster_endpoint(endpoints: list[EtcdEndpoint]) -> EtcdEndpoint | None:
    """One endpoint over every member, when there are several on one IPv4 address with one
    scheme (`picokube up --etcd-members N`); else None.

    Its channel is connected to one member at a time and moves to the next when that one's
    connection breaks (keepalive notices a hung member), so one stopped member costs a
    few seconds rather than the API server's etcd access. Members on different hosts are
    dialled one at a time as before (`Etcd3Storage.connect`).
    """
    if len(endpoints) < 2:
        return None
    first = endpoints[0]
    try:
        ipaddress.IPv4Address(first.host)
    except ValueError:
        return None
    if any(e.host != first.host or e.secure != first.secure for e in endpoints):
        return None
    url = ",".join(e.url for e in endpoints)
    return EtcdEndpoint(url=url, host=first.host, port=first.port, secure=first.secure,
                        other_ports=tuple(e.port for e in endpoints[1:]))


def parse_endpoint(endpoint: str) -> EtcdEndpoint:
    """"https://host:port", "http://host:port" or "host:port" as an `EtcdEndpoint`; ValueError if malformed."""
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if url.scheme not in ("http", "https"):
        raise ValueError(f"unsupported etcd endpoint scheme {url.scheme!r} in {endpoint!r} (use http or https)")
    try:
        port = url.port or DEFAULT_CLIENT_PORT
    except ValueError:
        raise ValueError(f"etcd endpoint with an invalid port: {endpoint!r}") from None
    if not url.hostname:
        raise ValueError(f"etcd endpoint without a host: {endpoint!r}")
    return EtcdEndpoint(url=endpoint, host=url.hostname, port=port, secure=url.scheme == "https")


class EtcdChannel:
    """One gRPC channel to one etcd endpoint, with the KV stub the storage calls.

    Create it inside the running event loop (grpc.aio channels are bound to it) and `close()`
    it on the same loop. Opening does not dial: the first RPC does, and fails with
    UNAVAILABLE when the endpoint cannot be reached or the TLS handshake is refused.
    """

    def __init__(self, endpoint: EtcdEndpoint, *, tls: EtcdTLSConfig | None, options: Mapping[str, Any]) -> None:
        opts = list(options.items())
        if endpoint.other_ports:  # one address list: certificates are checked against the shared host
            opts.append(("grpc.ssl_target_name_override", endpoint.host))
        if endpoint.secure:
            self.channel = grpc.aio.secure_channel(endpoint.target, (tls or EtcdTLSConfig()).credentials(),
                                                   options=opts)
        else:
            self.channel = grpc.aio.insecure_channel(endpoint.target, options=opts)
        self.kvstub: Any = rpc.KVStub(self.channel)
        # Per-call metadata (etcd's auth token would go here); none with certificate auth.
        self.metadata: tuple[tuple[str, str], ...] | None = None

    async def close(self) -> None:
        await self.channel.close()
