"""A real etcd plus a real API server process on free ports, for tests.

`ApiServerHarness` is the envtest of picokube: it generates a CA, serving certificate and
token file in a temp dir, starts `python -m apiserver` against an etcd endpoint (with its
own key prefix, so tests sharing one etcd never see each other's objects), waits for
/readyz, and hands out a kubeconfig (and a RESTClient) per identity:

    with ApiServerHarness(tmp_path, etcd_endpoint=ep) as api:
        path = api.kubeconfig("admin")                      # or api.node_kubeconfig("node-1")
        async with api.client("admin") as client: ...

In pytest, use the module-scoped fixture `api` (tests/conftest.py), which yields a started
harness on the session's etcd. A component under test runs against it as a real process
with one of its identities: `with api.component("scheduler", log_path=p, identity="scheduler") as s: ...`.
Each test should use its own namespace or object names, since the module shares one server.
The server may be stopped and started again (a restart keeps its port, prefix and PKI).

The ServiceAccount admission plugin is off by default (`disable_admission_plugins`), as in
upstream's integration test servers: it refuses pods whose service account does not exist,
and no controller creates the `default` accounts here unless a test starts one; a test of
that plugin passes `disable_admission_plugins=()`.

Identities: "admin" (system:masters), "controller-manager", "scheduler", "proxy", "dns", and any node name
passed in `nodes` (user system:node:<name>, group system:nodes).
"""

from __future__ import annotations

import os
import shutil
import ssl
import sys
import urllib.request
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from kube.client.config import ClientConfig, load_kubeconfig
from kube.client.rest import RESTClient
from kube.testing.ports import free_port
from kube.testing.process import Process
from picokube.kubeconfig import write_kubeconfig
from picokube.pki import ensure_cluster_pki
from picokube.tokens import (
    ADMIN_USER,
    CONTROLLER_MANAGER_USER,
    DNS_USER,
    PROXY_USER,
    SCHEDULER_USER,
    cluster_identities,
    ensure_token_file,
    node_user,
)

__all__ = ["ApiServerHarness"]

_ALIASES = {"admin": ADMIN_USER, "controller-manager": CONTROLLER_MANAGER_USER, "scheduler": SCHEDULER_USER,
            "proxy": PROXY_USER, "dns": DNS_USER}


class ApiServerHarness:
    """`python -m apiserver` on 127.0.0.1 with its own PKI, token file and etcd key prefix."""

    def __init__(self, workdir: Path, *, etcd_endpoint: str, nodes: Sequence[str] = ("node-1", "node-2"),
                 port: int | None = None, extra_args: Sequence[str] = (),
                 disable_admission_plugins: Sequence[str] = ("ServiceAccount",), prefix: str | None = None) -> None:
        self.workdir = workdir
        self.etcd_endpoint = etcd_endpoint
        self.nodes = list(nodes)
        self.port = port or free_port()
        self.extra_args = list(extra_args)
        if disable_admission_plugins:
            self.extra_args += ["--disable-admission-plugins", ",".join(disable_admission_plugins)]
        self.prefix = prefix or f"/registry-{uuid.uuid4().hex[:8]}"
        self.log_path = workdir / "apiserver.log"
        self.pki = ensure_cluster_pki(workdir / "pki")
        self.tokens = ensure_token_file(workdir / "tokens.csv", cluster_identities(self.nodes))
        self.process = Process(self.argv(), log_path=self.log_path)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "apiserver", "--etcd-endpoints", self.etcd_endpoint, "--port", str(self.port),
                "--tls-cert-file", str(self.pki.apiserver_cert), "--tls-private-key-file", str(self.pki.apiserver_key),
                "--client-ca-file", str(self.pki.ca_cert), "--token-auth-file", str(self.workdir / "tokens.csv"),
                "--etcd-prefix", self.prefix, *self.extra_args]

    def peer(self, workdir: Path) -> ApiServerHarness:
        """Another API server (not yet started) over the same etcd keys, with this one's CA,
        serving certificate and tokens, as a second member of an HA control plane."""
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.workdir / "pki", workdir / "pki", dirs_exist_ok=True)
        shutil.copy2(self.workdir / "tokens.csv", workdir / "tokens.csv")
        return ApiServerHarness(workdir, etcd_endpoint=self.etcd_endpoint, nodes=self.nodes,
                                extra_args=self.extra_args, disable_admission_plugins=(), prefix=self.prefix)

    def start(self, timeout: float = 30.0) -> Self:
        """Start the server and wait for /readyz (RuntimeError/TimeoutError carrying its log)."""
        self.process.start()
        self.process.wait_ready(self._ready, timeout=timeout)
        return self

    def _ready(self) -> bool:
        ctx = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        with urllib.request.urlopen(f"{self.server}/readyz", context=ctx, timeout=2) as resp:
            return bool(resp.status == 200)

    def stop(self) -> None:
        self.process.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def component(self, module: str, *args: str, identity: str, log_path: Path) -> Process:
        """`python -m <module> --kubeconfig <identity's> ARGS...` against this server, not yet started.

        The controller-manager and the scheduler elect a leader by default, as upstream's do;
        here they run alone (`--leader-elect=false`) unless ARGS say otherwise, so a restarted
        one need not wait out the Lease of the one it replaces.
        """
        elects = any(a == "--leader-elect" or a.startswith("--leader-elect=") for a in args)
        alone = ("--leader-elect=false",) if module in ("controllers", "scheduler") and not elects else ()
        return Process([sys.executable, "-m", module, "--kubeconfig", str(self.kubeconfig(identity)), *alone,
                        *args], log_path=log_path)

    def controller_manager(self, *args: str, log_path: Path) -> Process:
        """`python -m controllers` as the controller-manager (not yet started), publishing this
        server's CA as kube-root-ca.crt (`--root-ca-file`) as a cluster's controller-manager does."""
        return self.component("controllers", "--root-ca-file", str(self.pki.ca_cert), *args,
                              identity="controller-manager", log_path=log_path)

    def user_for(self, identity: str) -> str:
        if identity in _ALIASES:
            return _ALIASES[identity]
        if identity in self.nodes:
            return node_user(identity)
        return identity

    def token(self, identity: str) -> str:
        return self.tokens[self.user_for(identity)].token

    def kubeconfig(self, identity: str = "admin") -> Path:
        """Write (once) and return a kubeconfig file for one identity."""
        path = self.workdir / f"{identity.replace(':', '_')}.kubeconfig"
        if not path.exists():
            write_kubeconfig(path, server=self.server, ca_pem=self.pki.ca_pem(), user=self.user_for(identity),
                             token=self.token(identity))
        return path

    def node_kubeconfig(self, node: str) -> Path:
        return self.kubeconfig(node)

    def client_config(self, identity: str = "admin") -> ClientConfig:
        return load_kubeconfig(self.kubeconfig(identity))

    def client(self, identity: str = "admin", *, field_manager: str = "test") -> RESTClient:
        return RESTClient(self.client_config(identity), user_agent=f"picokube-test/{identity}",
                          field_manager=field_manager)

    def env(self) -> dict[str, str]:
        """Environment for subprocesses (kubectl, pkctl) using the admin kubeconfig."""
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig("admin"))}
