"""Readiness probes `picokube up` uses: a TCP port, the API server's /readyz, node Ready.

The probes answer "is it up yet?" without raising: each returns a verdict plus, when the
answer is no, a short human reason that `up` can print when it gives up. They only read;
`ApiProbe` speaks HTTPS to the API server, verifying it with the cluster CA.
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import httpx

__all__ = ["ApiProbe", "port_in_use", "port_open"]

logger = logging.getLogger(__name__)


def port_open(port: int, *, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on host:port right now."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def port_in_use(port: int, *, host: str = "127.0.0.1") -> bool:
    """Whether a listener already holds host:port (a socket in TIME_WAIT does not count).

    SO_REUSEADDR is set as servers set it (etcd, uvicorn), so only a live listener
    makes the bind fail.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


@dataclass
class ApiProbe:
    """Asks the API server at `server` about readiness; reuses one HTTPS connection."""

    server: str
    ca_file: Path
    token: str | None = None
    timeout: float = 2.0

    def __post_init__(self) -> None:
        self._http: httpx.Client | None = None

    @property
    def _client(self) -> httpx.Client:
        # Made on first use: the CA file need not exist when the probe is built.
        if self._http is None:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            self._http = httpx.Client(base_url=self.server, headers=headers, timeout=self.timeout,
                                      verify=ssl.create_default_context(cafile=str(self.ca_file)))
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def readyz(self) -> tuple[bool, str]:
        """(True, "") when GET /readyz answers 200, else (False, why not)."""
        try:
            resp = self._client.get("/readyz")
        except httpx.HTTPError as e:
            return False, f"GET {self.server}/readyz failed: {e or type(e).__name__}"
        if resp.status_code == 200:
            return True, ""
        return False, f"GET {self.server}/readyz returned {resp.status_code}: {resp.text.strip()[:300]}"

    def nodes_not_ready(self, names: Iterable[str]) -> tuple[list[str], str]:
        """The named Nodes without condition Ready=True (all of them if the list fails), and why."""
        wanted = list(names)
        if not wanted:
            return [], ""
        try:
            resp = self._client.get("/api/v1/nodes")
            resp.raise_for_status()
            items: list[dict[str, Any]] = resp.json().get("items") or []
        except (httpx.HTTPError, ValueError, AttributeError) as e:
            return wanted, f"GET {self.server}/api/v1/nodes failed: {e or type(e).__name__}"
        ready = {_name(n) for n in items if _is_ready(n)}
        seen = {_name(n) for n in items}
        missing = [n for n in wanted if n not in ready]
        parts = [f"{n} ({'not Ready' if n in seen else 'not registered'})" for n in missing]
        return missing, ("nodes not Ready: " + ", ".join(parts)) if missing else ""


def _name(node: dict[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _is_ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
