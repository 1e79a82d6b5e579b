"""Client configuration from a kubeconfig file, resolved the way kubectl resolves it.

Resolution order: an explicit path, then `$KUBECONFIG` (first existing file of the list),
then `~/.kube/config`. Supports what picokube's own kubeconfigs carry (server, CA data or
file, bearer token or client certificate) and `insecure-skip-tls-verify`.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ClientConfig", "load_kubeconfig", "resolve_kubeconfig_path", "KubeconfigError"]


class KubeconfigError(Exception):
    """The kubeconfig is missing, unreadable, or lacks what a client needs."""


@dataclass(frozen=True)
class ClientConfig:
    """Everything a RESTClient needs to reach and authenticate to one API server."""

    server: str
    token: str | None = None
    ca_data: bytes | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    namespace: str = "default"
    context: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def with_overrides(self, *, server: str | None = None, token: str | None = None) -> ClientConfig:
        return replace(self, server=server or self.server, token=token or self.token)

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS verification setting for httpx: a context trusting the cluster CA."""
        if not self.server.startswith("https"):
            return False
        if self.insecure_skip_tls_verify:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.ca_data:
            ctx = ssl.create_default_context(cadata=self.ca_data.decode())
        else:
            ctx = ssl.create_default_context()
        if self.client_cert_data and self.client_key_data:
            with tempfile.TemporaryDirectory() as tmp:
                cert, key = Path(tmp, "c.crt"), Path(tmp, "c.key")
                cert.write_bytes(self.client_cert_data)
                key.write_bytes(self.client_key_data)
                ctx.load_cert_chain(str(cert), str(key))
        return ctx


def resolve_kubeconfig_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The kubeconfig file kubectl would use; raise KubeconfigError when there is none."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("KUBECONFIG")
    if env:
        for part in env.split(os.pathsep):
            if part and Path(part).expanduser().exists():
                return Path(part).expanduser()
        return Path(env.split(os.pathsep)[0]).expanduser()
    return Path("~/.kube/config").expanduser()


def _data(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    if entry.get(f"{key}-data"):
        return base64.b64decode(entry[f"{key}-data"])
    if entry.get(key):
        path = Path(entry[key])
        return (path if path.is_absolute() else base / path).read_bytes()
    return None


def load_kubeconfig(path: str | os.PathLike[str] | None = None, *, context: str | None = None) -> ClientConfig:
    """Load the named (or current) context of a kubeconfig into a ClientConfig."""
    file = resolve_kubeconfig_path(path)
    try:
        doc = yaml.safe_load(file.read_text()) or {}
    except FileNotFoundError as e:
        raise KubeconfigError(f"kubeconfig {file} not found") from e
    except (OSError, yaml.YAMLError) as e:
        raise KubeconfigError(f"cannot read kubeconfig {file}: {e}") from e
    name = context or doc.get("current-context")
    if not name:
        raise KubeconfigError(f"kubeconfig {file} has no current-context")
    ctx = next((c["context"] for c in doc.get("contexts") or [] if c.get("name") == name), None)
    if ctx is None:
        raise KubeconfigError(f"context {name!r} not found in {file}")
    cluster = next((c["cluster"] for c in doc.get("clusters") or [] if c.get("name") == ctx.get("cluster")), None)
    if cluster is None or not cluster.get("server"):
        raise KubeconfigError(f"cluster {ctx.get('cluster')!r} of context {name!r} not found in {file}")
    user = next((u.get("user") or {} for u in doc.get("users") or [] if u.get("name") == ctx.get("user")), {})
    base = file.parent
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(user["tokenFile"]).read_text().strip()
    return ClientConfig(
        server=str(cluster["server"]).rstrip("/"),
        token=token,
        ca_data=_data(cluster, "certificate-authority", base),
        client_cert_data=_data(user, "client-certificate", base),
        client_key_data=_data(user, "client-key", base),
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify")),
        namespace=ctx.get("namespace") or "default",
        context=name,
    )
