"""Bootstrap tokens: the `<id>.<secret>` credentials a machine joins the cluster with.

Mirrors k8s.io/cluster-bootstrap (token/api, token/util, secret): a token is six and sixteen
characters of `[a-z0-9]`, kept as a Secret of type `bootstrap.kubernetes.io/token` named
`bootstrap-token-<id>` in kube-system, whose data carries `token-id`, `token-secret`,
`expiration` (RFC 3339), the usages (`usage-bootstrap-authentication`, ...) and
`auth-extra-groups` (each `system:bootstrappers:...`). The API server authenticates such a
token as `system:bootstrap:<id>` in `system:bootstrappers` (+ the extra groups); the token
cleaner deletes the Secret once it has expired. Values here are plain strings; a Secret
on the wire holds them base64-encoded (`secret_data`/`decode_secret_data`).
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = ["BOOTSTRAP_GROUP", "BOOTSTRAP_USER_PREFIX", "SECRET_NAME_PREFIX", "SECRET_TYPE", "TOKEN_PATTERN",
           "bootstrap_secret", "decode_secret_data", "expiration_of", "generate_token", "is_expired", "parse_token",
           "secret_name"]

SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_NAME_PREFIX = "bootstrap-token-"
BOOTSTRAP_USER_PREFIX = "system:bootstrap:"
BOOTSTRAP_GROUP = "system:bootstrappers"
TOKEN_PATTERN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def generate_token() -> str:
    """A fresh random token, `[a-z0-9]{6}.[a-z0-9]{16}`."""
    def part(n: int) -> str:
        return "".join(secrets.choice(_ALPHABET) for _ in range(n))
    return f"{part(6)}.{part(16)}"


def parse_token(token: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed token, else None."""
    m = TOKEN_PATTERN.match(token.strip())
    return (m.group(1), m.group(2)) if m else None


def secret_name(token_id: str) -> str:
    return SECRET_NAME_PREFIX + token_id


def bootstrap_secret(token: str, *, expiration: datetime | None, description: str = "",
                     extra_groups: Sequence[str] = ("system:bootstrappers:kubeadm:default-node-token",),
                     usages: Sequence[str] = ("authentication", "signing")) -> dict[str, Any]:
    """The Secret that makes `token` valid until `expiration` (None: forever). ValueError on a malformed token."""
    parsed = parse_token(token)
    if parsed is None:
        raise ValueError(f"the token must match {TOKEN_PATTERN.pattern}")
    token_id, token_secret = parsed
    data = {"token-id": token_id, "token-secret": token_secret}
    if description:
        data["description"] = description
    if expiration is not None:
        data["expiration"] = expiration.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    data |= {f"usage-bootstrap-{u}": "true" for u in usages}
    if extra_groups:
        data["auth-extra-groups"] = ",".join(extra_groups)
    return {"apiVersion": "v1", "kind": "Secret", "type": SECRET_TYPE,
            "metadata": {"name": secret_name(token_id), "namespace": "kube-system"},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def decode_secret_data(secret: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's data as strings (undecodable values are left out)."""
    out: dict[str, str] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[str(key)] = base64.b64decode(str(value), validate=True).decode()
        except (binascii.Error, ValueError):
            continue
    return out


def expiration_of(data: Mapping[str, str]) -> datetime | None:
    """The `expiration` of decoded token data; None when it has none. ValueError when it does not parse."""
    raw = data.get("expiration")
    if not raw:
        return None
    return datetime.fromisoformat(raw.replace("Z", "+00:00"))


def is_expired(data: Mapping[str, str], now: datetime) -> bool:
    """True when the token has expired at `now`, or its expiration does not parse (it is then unusable)."""
    try:
        expires = expiration_of(data)
    except ValueError:
        return True
    return expires is not None and expires <= now
