"""A private single-member etcd for a test session or one test, on free loopback ports.

Started with the same command line as `picokube up` runs (`picokube.etcd.etcd_command`),
plus any `extra_args` a test needs (say, fast watch progress notifications). `start()`
returns once etcd accepts client connections; `stop()` always leaves no process behind.
The data dir survives `stop()`, so a test can restart the same member.

Plain HTTP by default, for speed. With `tls=True` it runs as `picokube up` runs it: https
only, client certificates required, with an etcd PKI of its own beside the data dir
(`<data_dir>-pki`, see `picokube.etcd_pki`); `tls_pki` then holds the CA and the API
server's client certificate, and `api_args()` gives the matching `--etcd-*` flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from kube.testing.ports import free_port, port_open
from kube.testing.process import Process
from picokube.etcd import etcd_command
from picokube.etcd_pki import EtcdPki, ensure_etcd_pki

__all__ = ["EtcdProcess"]


class EtcdProcess:
    """etcd on 127.0.0.1; its output goes to `<data_dir>.log` unless `log_path` says otherwise."""

    def __init__(self, *, data_dir: Path, client_port: int | None = None, peer_port: int | None = None,
                 extra_args: Sequence[str] = (), log_path: Path | None = None, tls: bool = False) -> None:
        self.data_dir = data_dir
        self.client_port = client_port or free_port()
        self.peer_port = peer_port or free_port()
        self.pki = ensure_etcd_pki(data_dir.with_name(f"{data_dir.name}-pki")) if tls else None
        argv = [*etcd_command(data_dir=data_dir, client_port=self.client_port, peer_port=self.peer_port,
                              pki=self.pki), *extra_args]
        self.process = Process(argv, log_path=log_path or data_dir.with_name(f"{data_dir.name}.log"))

    @property
    def endpoint(self) -> str:
        return f"{'https' if self.pki else 'http'}://127.0.0.1:{self.client_port}"

    @property
    def tls_pki(self) -> EtcdPki:
        """The PKI of a `tls=True` etcd; AssertionError for a plain one."""
        assert self.pki is not None, "this etcd runs without TLS"
        return self.pki

    def api_args(self) -> list[str]:
        """The API server's `--etcd-cafile/--etcd-certfile/--etcd-keyfile` for this etcd (none if plain)."""
        if self.pki is None:
            return []
        return ["--etcd-cafile", str(self.pki.ca.ca_cert), "--etcd-certfile", str(self.pki.apiserver_client_cert),
                "--etcd-keyfile", str(self.pki.apiserver_client_key)]

    def start(self, *, timeout: float = 20.0) -> Self:
        """Start etcd and wait until it accepts connections (RuntimeError/TimeoutError with its log)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process.start()
        self.process.wait_ready(lambda: port_open(self.client_port), timeout=timeout)
        return self

    def stop(self) -> None:
        self.process.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
