"""serviceaccounts/token: a signed token for that account (authentication.k8s.io/v1 TokenRequest).

Expiration defaults to an hour, may not be under ten minutes, and is capped at 48 hours. A
request that names no audience gets the API server's own (`--api-audiences`, else the issuer).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any, Protocol

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest, Invalid

__all__ = ["TokenRequestStorage", "TokenIssuer"]

class TokenIssuer(Protocol):
    @property
    def audiences(self) -> Sequence[str]: ...

    def issue(self, *, namespace: str, name: str, uid: str, audiences: Sequence[str],
              expiration_seconds: int) -> tuple[str, Any]: ...


class TokenRequestStorage:
    kind = Kind("authentication.k8s.io", "v1", "TokenRequest")

    def __init__(self, service_accounts: RegistryStore, issuer: TokenIssuer) -> None:
        self.service_accounts, self.issuer = service_accounts, issuer

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        if name is None:
            raise BadRequest("a token request names its service account")
        spec = obj.get("spec") or {}
        expiration = spec.get("expirationSeconds") or 3600
        if not isinstance(expiration, int) or expiration < 600:
            raise Invalid('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: '
                          "may not specify a duration less than 10 minutes")
        expiration = min(expiration, 48 * 3600)
        audiences = list(spec.get("audiences") or self.issuer.audiences)
        sa = await self.service_accounts.get(ctx.namespace, name)
        token, exp = self.issuer.issue(namespace=str(ctx.namespace), name=name, uid=sa["metadata"]["uid"],
                                       audiences=audiences, expiration_seconds=expiration)
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": ctx.namespace, "creationTimestamp": None},
                "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": None},
                "status": {"token": token, "expirationTimestamp": datetime.datetime.fromtimestamp(
                    float(exp), datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}}
