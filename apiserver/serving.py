"""The API server's HTTPS serving: uvicorn over the app, on its own address or on a socket handed in.

Kept apart from `__main__` so the parent of several workers (`workers.py`) parses flags without
importing the app it never serves.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import uvicorn

from apiserver.app import build_app
from apiserver.authn.x509 import PeerCertificateProtocol
from apiserver.config import ApiServerConfig
from apiserver.tracing import StoreSpanExporter
from kube.serving import IDLE_TIMEOUT_SECONDS, READ_HEADER_TIMEOUT_SECONDS, with_read_header_timeout
from kube.tracing import TracingConfig, setup_tracing

__all__ = ["Server", "StartupFailed", "build_server", "serve"]


class StartupFailed(Exception):
    """uvicorn did not start serving: the app's startup failed or the port was taken (uvicorn logged why)."""


class Server(uvicorn.Server):
    """uvicorn's server without its own signal handlers: `kube.component` owns SIGTERM/SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def request_shutdown(self) -> None:
        """Begin the graceful shutdown, as uvicorn's own signal handler would."""
        self.should_exit = True


def build_server(config: ApiServerConfig) -> Server:
    """uvicorn serving the app over HTTPS, asking for (not requiring) a client certificate with --client-ca-file.

    Requests that ask to upgrade (exec, attach, port-forward, proxies) reach the app with their connection.
    """
    # A request's head must arrive within kube-apiserver's 32 s, or within the request timeout if shorter.
    header_timeout = min(READ_HEADER_TIMEOUT_SECONDS, config.request_timeout)
    client_auth: dict[str, Any] = {"http": with_read_header_timeout(PeerCertificateProtocol, header_timeout)}
    if config.client_ca_file:
        client_auth.update(ssl_ca_certs=str(config.client_ca_file), ssl_cert_reqs=ssl.CERT_OPTIONAL)
    own_spans = StoreSpanExporter()
    setup_tracing("apiserver", config=TracingConfig(config.tracing, config.otlp_endpoint), exporters=[own_spans])
    return Server(uvicorn.Config(build_app(config, own_spans=own_spans), host=config.bind_address, port=config.port,
                                 log_level="warning", ssl_certfile=str(config.tls_cert_file),
                                 ssl_keyfile=str(config.tls_private_key_file), access_log=False,
                                 timeout_graceful_shutdown=3, lifespan="on", timeout_keep_alive=IDLE_TIMEOUT_SECONDS,
                                 **client_auth))


async def serve(server: Server, listen_fd: int | None = None) -> None:
    """Serve until shut down (on `listen_fd`, a listening socket handed in, if given); StartupFailed if it cannot."""
    sockets = [socket.socket(fileno=listen_fd)] if listen_fd is not None else None
    try:
        await server.serve(sockets=sockets)
    except SystemExit:  # how uvicorn gives up on a failed startup or bind (its own exit status 3)
        raise StartupFailed("see the errors logged above") from None
    if not server.started:
        raise StartupFailed("see the errors logged above")
