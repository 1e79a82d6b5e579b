"""The API objects a pod consumes, as the kubelet reads them: ConfigMaps, Secrets, tokens.

Mirrors the kubelet's configmap/secret managers and token manager (pkg/kubelet/configmap,
pkg/kubelet/secret, pkg/kubelet/token), reduced to GETs through the kubelet's own client:
- the Node authorizer lets a node read only the objects its pods name, so every read is
  one GET of one named object (no list, no watch of a whole namespace);
- a missing object raises `SourceNotFound`, whose text is upstream's (`configmap "x" not
  found`, `secret "x" not found`), for CreateContainerConfigError and FailedMount messages;
- ConfigMap `data` and `binaryData` (volumes) or `data` alone (env), and Secret `data`,
  come back as bytes per key;
- service account tokens are requested with the pod as bound object and cached until 80%
  of their lifetime has passed (or 24 h, as upstream), then requested again.
`PodObjects` is safe to use from many tasks of one loop; its only state is the token cache.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any, Protocol

from kube.api import Pod
from kube.errors import NotFound
from kube.resources import resource_for_kind

__all__ = ["ObjectGetter", "PodObjects", "SourceNotFound", "Token"]

_TOKEN_MAX_AGE = 24 * 3600.0


class SourceNotFound(Exception):
    """A ConfigMap or Secret a pod needs does not exist; str() is the kubelet's message."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f'{kind} "{name}" not found')
        self.kind, self.name = kind, name


class ObjectGetter(Protocol):
    """Where objects are read from: RESTClient's raw verbs."""

    async def request(self, method: str, path: str, *, body: Any = None) -> Any: ...


@dataclass(frozen=True)
class Token:
    token: str
    expires_at: float
    issued_at: float

    def needs_refresh(self, now: float) -> bool:
        """True once 80% of the token's lifetime (at most 24 h) has passed, as upstream's token manager."""
        ttl = self.expires_at - self.issued_at
        return now >= self.expires_at or now - self.issued_at > min(ttl * 0.8, _TOKEN_MAX_AGE)


def _decoded(values: dict[str, str] | None) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in (values or {}).items()}


class PodObjects:
    """Reads the ConfigMaps and Secrets of a pod's namespace, and requests its tokens."""

    def __init__(self, client: ObjectGetter | None) -> None:
        """With no client (a kubelet without an API server), every object is missing."""
        self.client = client
        self._tokens: dict[tuple[str, str, str, str, int], Token] = {}

    async def _get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        info = resource_for_kind("v1", kind)
        assert info is not None
        if self.client is None:
            raise SourceNotFound(kind.lower(), name)
        try:
            return dict(await self.client.request("GET", info.object_path(name, namespace)))
        except NotFound as e:
            raise SourceNotFound(kind.lower(), name) from e

    async def config_map(self, namespace: str, name: str) -> dict[str, bytes]:
        """Every key of the ConfigMap (`data` as UTF-8, `binaryData` decoded); raises SourceNotFound."""
        obj = await self._get("ConfigMap", namespace, name)
        return {**{k: v.encode() for k, v in (obj.get("data") or {}).items()}, **_decoded(obj.get("binaryData"))}

    async def config_map_data(self, namespace: str, name: str) -> dict[str, bytes]:
        """Only the ConfigMap's `data` (what env reads: `binaryData` is for volumes); raises SourceNotFound."""
        obj = await self._get("ConfigMap", namespace, name)
        return {k: v.encode() for k, v in (obj.get("data") or {}).items()}

    async def secret(self, namespace: str, name: str) -> dict[str, bytes]:
        """Every key of the Secret, decoded; raises SourceNotFound."""
        return _decoded((await self._get("Secret", namespace, name)).get("data"))

    async def service_account_token(self, pod: Pod, *, audience: str, expiration_seconds: int) -> Token:
        """A token for the pod's service account, bound to the pod; cached until it needs a refresh.

        Raises the API's error (for example Forbidden, NotFound) when the request fails.
        """
        meta = pod.metadata
        sa = pod.spec.service_account_name or "default"
        key = (str(meta.namespace), sa, str(meta.uid), audience, expiration_seconds)
        now = time.time()
        cached = self._tokens.get(key)
        if cached is not None and not cached.needs_refresh(now):
            return cached
        if self.client is None:
            raise SourceNotFound("serviceaccount", sa)
        info = resource_for_kind("v1", "ServiceAccount")
        assert info is not None
        spec: dict[str, Any] = {"expirationSeconds": expiration_seconds,
                                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta.name,
                                                   "uid": meta.uid}}
        if audience:
            spec["audiences"] = [audience]
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
        answer = await self.client.request("POST", info.object_path(sa, str(meta.namespace), "token"), body=body)
        status = answer.get("status") or {}
        granted = int((answer.get("spec") or {}).get("expirationSeconds") or expiration_seconds)
        token = Token(str(status.get("token") or ""), now + granted, now)
        self._tokens[key] = token
        return token

    def forget_pod(self, uid: str) -> None:
        """Drop the cached tokens of a pod that is gone."""
        for key in [k for k in self._tokens if k[2] == uid]:
            del self._tokens[key]
