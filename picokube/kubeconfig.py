"""Kubeconfig files for the admin and for each component of a local cluster.

The files are standard kubeconfig (`apiVersion: v1`, `kind: Config`) so that the real
kubectl, the official Python client, pkctl and our components all read them: one cluster
`picokube` (server URL plus the CA inline as `certificate-authority-data`), one user with
a bearer `token`, and one context `picokube`, which is the current context.

Guarantees: every file is written atomically with mode 0600 (it holds a credential), and
rewriting it with the same inputs yields the same bytes.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import yaml

from picokube._files import write_file_atomic

__all__ = ["CONTEXT_NAME", "build_kubeconfig", "write_kubeconfig"]

logger = logging.getLogger(__name__)

CONTEXT_NAME = "picokube"


def build_kubeconfig(*, server: str, ca_pem: bytes, user: str, token: str) -> dict[str, Any]:
    """The kubeconfig document, as a plain dict, for `user` authenticating with `token`."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": CONTEXT_NAME,
            "cluster": {
                "server": server,
                "certificate-authority-data": base64.b64encode(ca_pem).decode(),
            },
        }],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{
            "name": CONTEXT_NAME,
            "context": {"cluster": CONTEXT_NAME, "user": user},
        }],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    }


def write_kubeconfig(path: Path, *, server: str, ca_pem: bytes, user: str, token: str) -> Path:
    """Write the kubeconfig for `user` to `path` (mode 0600) and return `path`."""
    doc = build_kubeconfig(server=server, ca_pem=ca_pem, user=user, token=token)
    write_file_atomic(path, yaml.safe_dump(doc, sort_keys=False).encode(), mode=0o600)
    logger.debug("Wrote kubeconfig %s for %s", path, user)
    return path
