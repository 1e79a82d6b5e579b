"""serviceaccounts/token: a signed token for that account (authentication.k8s.io/v1 TokenRequest).

Mirrors pkg/registry/core/serviceaccount/storage/token.go. Expiration defaults to an hour,
may not be under ten minutes (nor over 2^32 seconds), and is capped at 48 hours. A request
that names no audience gets the API server's own (`--api-audiences`, else the issuer).

`spec.boundObjectRef` binds the token to a Pod, a Secret or a Node (apiVersion v1): the
object must exist (404 otherwise), carry the uid the reference gives if it gives one (409,
upstream's message), and a pod must run as the service account asked for (400). A
pod-bound token also records the pod's node (name and uid; the name alone when the Node is
gone). Such a token stops authenticating once its object is gone or replaced (see
authn/serviceaccount_validator.py).

Validating admission sees the request as a CREATE of serviceaccounts/token (NodeRestriction
holds a kubelet to tokens bound to its own pods there).

As upstream with `--service-account-extend-token-expiration` (the default), a pod-bound
token requested for exactly 3607 seconds (the expiry the ServiceAccount admission puts in
the `kube-api-access-*` volume) for the API server's own audiences is signed for a year,
with `warnafter` at the requested expiry, so a client that fails to reload its token keeps
working; the reported `expirationTimestamp` is still the requested one, so the kubelet
rotates it as if it expired then.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from apiserver.admission.interfaces import Operation
from apiserver.authn.serviceaccount import ObjectRef
from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from apiserver.validation.field import invalid
from kube.errors import ApiError, BadRequest, Conflict, FieldError, InternalError, Invalid
from kube.timeutil import format_time

__all__ = ["EXTENDED_EXPIRATION_SECONDS", "TokenRequestStorage", "TokenIssuer", "WARN_ONLY_EXPIRATION_SECONDS"]

WARN_ONLY_EXPIRATION_SECONDS = 60 * 60 + 7
EXTENDED_EXPIRATION_SECONDS = 24 * 365 * 60 * 60
MAX_EXPIRATION_SECONDS = 48 * 3600
_GROUP_KIND = "TokenRequest.authentication.k8s.io"


class TokenIssuer(Protocol):
    @property
    def audiences(self) -> Sequence[str]: ...

    def issue(self, *, namespace: str, name: str, uid: str, audiences: Sequence[str], expiration_seconds: int,
              now: float | None = None, pod: ObjectRef | None = None, secret: ObjectRef | None = None,
              node: ObjectRef | None = None, warn_after_seconds: int | None = None) -> tuple[str, Any]: ...


def _ref(obj: Obj) -> ObjectRef:
    meta = obj.get("metadata") or {}
    return ObjectRef(str(meta.get("name") or ""), str(meta.get("uid") or ""))


class TokenRequestStorage:
    kind = Kind("authentication.k8s.io", "v1", "TokenRequest")

    def __init__(self, service_accounts: RegistryStore, issuer: TokenIssuer, *, pods: RegistryStore | None = None,
                 secrets: RegistryStore | None = None, nodes: RegistryStore | None = None,
                 extend_expiration: bool = True) -> None:
        self.service_accounts, self.issuer = service_accounts, issuer
        self.pods, self.secrets, self.nodes = pods, secrets, nodes
        self.extend_expiration = extend_expiration

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        if name is None:
            raise BadRequest("a token request names its service account")
        namespace = str(ctx.namespace or "")
        meta, spec = obj.get("metadata") or {}, dict(obj.get("spec") or {})
        _check_metadata(meta, name, namespace)
        sa = await self.service_accounts.get(namespace, name)
        audiences = list(spec.get("audiences") or self.issuer.audiences)
        expiration = spec.get("expirationSeconds")
        expiration = 3600 if expiration is None else expiration
        _validate(expiration)
        request = {**obj, "metadata": {**meta, "name": name, "namespace": namespace}, "spec": {
            **spec, "audiences": audiences, "expirationSeconds": expiration}}
        await ctx.admission.chain.validate(ctx.admission.attributes(
            Operation.CREATE, resource=self.service_accounts.info, subresource="token", namespace=namespace,
            name=name, obj=request, old=None, dry_run=ctx.dry_run))
        now = time.time()
        binding = await self._bound_objects(namespace, name, spec.get("boundObjectRef"))
        expiration = min(expiration, MAX_EXPIRATION_SECONDS)
        signed_for, warn_after = expiration, None
        if self.extend_expiration and "pod" in binding and expiration == WARN_ONLY_EXPIRATION_SECONDS \
                and set(audiences) <= set(self.issuer.audiences):
            signed_for, warn_after = EXTENDED_EXPIRATION_SECONDS, expiration
        try:
            token, _ = self.issuer.issue(namespace=namespace, name=name, uid=sa["metadata"]["uid"],
                                         audiences=audiences, expiration_seconds=signed_for, now=now,
                                         warn_after_seconds=warn_after, **binding)
        except ValueError as e:
            raise InternalError(f"failed to generate token: {e}") from e
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": format_time(now)},
                "spec": {"audiences": audiences, "expirationSeconds": expiration,
                         "boundObjectRef": spec.get("boundObjectRef")},
                "status": {"token": token, "expirationTimestamp": format_time(int(now) + expiration)}}

    async def _bound_objects(self, namespace: str, account: str, ref: Any) -> dict[str, ObjectRef]:
        """The issuer's pod/secret/node arguments for `spec.boundObjectRef` (empty when unbound)."""
        if not isinstance(ref, dict):
            return {}
        api_version, kind, name = ref.get("apiVersion") or "", ref.get("kind") or "", str(ref.get("name") or "")
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        version = api_version.rpartition("/")[2]
        stores = {"Pod": self.pods, "Secret": self.secrets, "Node": self.nodes}
        store = stores.get(kind) if group == "" else None
        if store is None:
            raise BadRequest(f"cannot bind token to object of type {_gvk_string(group, version, kind)}")
        obj = await store.get(None if kind == "Node" else namespace, name)
        if ref.get("uid") and ref["uid"] != (obj.get("metadata") or {}).get("uid"):
            raise Conflict(f'Operation cannot be fulfilled on {kind} "{name}": the UID in the bound object '
                           f"reference ({ref['uid']}) does not match the UID in record. The object might have been "
                           "deleted and then recreated",
                           details={"name": name, "kind": kind})
        if kind == "Pod":
            if (obj.get("spec") or {}).get("serviceAccountName") != account:
                raise BadRequest(f'cannot bind token for serviceaccount "{account}" to pod running with different '
                                 "serviceaccount name.")
            node = await self._pod_node(obj)
            return {"pod": _ref(obj), **({"node": node} if node is not None else {})}
        return {"secret" if kind == "Secret" else "node": _ref(obj)}

    async def _pod_node(self, pod: Obj) -> ObjectRef | None:
        """The node a pod runs on, for the token's node info; its name alone when the Node is gone."""
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name or self.nodes is None:
            return None
        cached = self.nodes.lister().get(None, node_name)
        if cached is not None:
            return _ref(cached)
        try:
            return _ref(await self.nodes.get(None, node_name))
        except ApiError as e:
            if e.code != 404:
                raise
            return _ref({"metadata": {"name": node_name}})


def _check_metadata(meta: Obj, name: str, namespace: str) -> None:
    """The body may name the account and namespace only as the path does (upstream's check)."""
    for key, want in (("name", name), ("namespace", namespace)):
        given = meta.get(key)
        if given and given != want:
            what = "name" if key == "name" else "namespace"
            err = invalid(f"metadata.{key}", given, f"must match the service account {what} if specified")
            raise Invalid(f'{_GROUP_KIND} "{name}" is invalid: {err}',
                          details={"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest",
                                   "causes": [err.cause()]})


def _validate(expiration: Any) -> None:
    """ValidateTokenRequest: expirationSeconds between ten minutes and 2^32 seconds."""
    errs: list[FieldError] = []
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        errs.append(invalid("spec.expirationSeconds", expiration, "must be an integer"))
    elif expiration < 600:
        errs.append(invalid("spec.expirationSeconds", expiration, "may not specify a duration less than 10 minutes"))
    elif expiration > 1 << 32:
        errs.append(invalid("spec.expirationSeconds", expiration, "may not specify a duration larger than 2^32 "
                                                                  "seconds"))
    if errs:
        raise Invalid(f'{_GROUP_KIND} "" is invalid: {errs[0]}',
                      details={"group": "authentication.k8s.io", "kind": "TokenRequest",
                               "causes": [e.cause() for e in errs]})


def _gvk_string(group: str, version: str, kind: str) -> str:
    """schema.GroupVersionKind's String(): `group/version, Kind=kind`."""
    return f"{group}/{version}, Kind={kind}"
