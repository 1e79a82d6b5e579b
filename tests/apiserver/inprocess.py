"""An API server in the test's own event loop: the real app, registry and admission on the real
etcd, reached through httpx's ASGI transport, for tests that hand the server parts of their own
(an admission plugin, a resource registered while it runs)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import httpx

from apiserver.config import ApiServerConfig
from apiserver.server import ApiServer, assemble

__all__ = ["TOKEN", "admin_client", "serve_in_process"]

TOKEN = "in-process-admin-token"


@contextlib.asynccontextmanager
async def serve_in_process(etcd_endpoint: str, tmp_path: Path, *,
                           admission_plugins: Iterable[object] = (),
                           disable_admission_plugins: tuple[str, ...] = ("ServiceAccount",),
                           ) -> AsyncIterator[ApiServer]:
    """A started server on its own etcd prefix whose token file knows one admin (`TOKEN`).

    The ServiceAccount admission plugin is off unless asked for: no controller creates the
    `default` accounts it requires here.
    """
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{TOKEN},admin,admin,"system:masters"\n')
    config = ApiServerConfig(etcd_endpoints=(etcd_endpoint,), token_auth_file=tokens,
                             etcd_prefix=f"/in-process-{uuid.uuid4().hex[:8]}", etcd_compaction_interval=0,
                             disable_admission_plugins=disable_admission_plugins)
    server = await assemble(config, admission_plugins=admission_plugins)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def admin_client(server: ApiServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://apiserver",
                             headers={"Authorization": f"Bearer {TOKEN}"})
