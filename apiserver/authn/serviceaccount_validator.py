"""ServiceAccount token authentication: a verified token, checked against the live objects it names.

Mirrors pkg/serviceaccount/claims.go's validator and the user it yields
(k8s.io/apiserver/pkg/authentication/serviceaccount). After `TokenSigner.verify` (signature,
issuer, one of the API server's audiences, unexpired with a 60 s leeway), a token
authenticates only while:
- its ServiceAccount exists with the uid in the token (a deleted and recreated account
  inherits no old tokens) and was not deleted more than the leeway ago;
- for a token bound to a secret or a pod: that object exists with the uid in the token and
  was not deleted more than the leeway ago (a pod in its graceful termination still
  counts); for a token bound to a node alone, likewise the node. The node recorded beside a
  pod is information only.

The user is `system:serviceaccount:<namespace>:<name>` with the account's uid, the groups
`system:serviceaccounts`, `system:serviceaccounts:<namespace>` and `system:authenticated`,
and upstream's extra: `authentication.kubernetes.io/pod-name` and `pod-uid` for a pod-bound
token, `node-name` (and `node-uid` when known) for a token naming a node, and
`credential-id` (`JTI=<jti>`) for a token with an id. Lookups read the watch caches and
never block; a bad token is None, never an exception, so the pipeline answers 401.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from apiserver.authn.authenticator import UserInfo
from apiserver.authn.serviceaccount import LEEWAY_SECONDS, TokenSigner
from kube.timeutil import parse_time

__all__ = ["Lookup", "ServiceAccountAuthenticator", "service_account_user"]

logger = logging.getLogger(__name__)

Obj = dict[str, Any]
Lookup = Callable[[str, str], "Obj | None"]
NodeLookup = Callable[[str], "Obj | None"]

_EXTRA = "authentication.kubernetes.io/"


class ServiceAccountAuthenticator:
    """Authenticates `Authorization: Bearer <token>` requests carrying our ServiceAccount tokens.

    `lookup(namespace, name)` returns the ServiceAccount object or None; `pod_lookup`,
    `secret_lookup` (both by namespace and name) and `node_lookup` (by name) do the same for
    the objects bound tokens name. A lookup left out is not checked. None may block.
    """

    def __init__(self, signer: TokenSigner, lookup: Lookup, *, audiences: Sequence[str] | None = None,
                 pod_lookup: Lookup | None = None, secret_lookup: Lookup | None = None,
                 node_lookup: NodeLookup | None = None, now: Callable[[], float] = time.time) -> None:
        self.signer = signer
        self.lookup = lookup
        self.audiences = tuple(audiences) if audiences is not None else signer.audiences
        self.pod_lookup, self.secret_lookup, self.node_lookup = pod_lookup, secret_lookup, node_lookup
        self.now = now

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token.count(".") != 2:
            return None
        claims = self.signer.verify(token.strip(), audiences=self.audiences, now=self.now())
        if claims is None:
            return None
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            return None
        ns, sa = private.get("namespace"), _ref(private.get("serviceaccount"))
        if not isinstance(ns, str) or sa is None or claims.get("sub") != f"system:serviceaccount:{ns}:{sa[0]}":
            return None
        reason = self._invalid(ns, sa, private)
        if reason:
            logger.debug("Service account token refused", extra={"namespace": ns, "serviceaccount": sa[0],
                                                                   "reason": reason})
            return None
        return service_account_user(ns, sa[0], sa[1], pod=_ref(private.get("pod")), node=_ref(private.get("node")),
                                    jti=claims.get("jti"))

    def _invalid(self, ns: str, sa: tuple[str, str], private: Obj) -> str:
        """Why the objects the token names no longer back it, or "" when they do."""
        deleted_before = self.now() - LEEWAY_SECONDS
        account = self.lookup(ns, sa[0])
        if account is None:
            return f'serviceaccounts "{sa[0]}" not found'
        if _uid(account) != sa[1]:
            return f"service account UID ({_uid(account)}) does not match claim ({sa[1]})"
        if _deleted_before(account, deleted_before):
            return f"service account {ns}/{sa[0]} has been deleted"
        pod, secret, node = _ref(private.get("pod")), _ref(private.get("secret")), _ref(private.get("node"))
        checks: list[tuple[str, tuple[str, str] | None, Callable[[str], Obj | None] | None]] = [
            ("secret", secret, None if self.secret_lookup is None else _in(self.secret_lookup, ns)),
            ("pod", pod, None if self.pod_lookup is None else _in(self.pod_lookup, ns)),
            ("node", node if pod is None else None, self.node_lookup)]
        for kind, ref, get in checks:
            if ref is None or get is None:
                continue
            obj = get(ref[0])
            if obj is None or _deleted_before(obj, deleted_before):
                return "service account token has been invalidated"
            if _uid(obj) != ref[1]:
                return f"{kind} UID ({_uid(obj)}) does not match service account {kind} ref claim ({ref[1]})"
        return ""


def service_account_user(namespace: str, name: str, uid: str, *, pod: tuple[str, str] | None = None,
                         node: tuple[str, str] | None = None, jti: object = None) -> UserInfo:
    """The user a service account token proves, with upstream's extra (ServiceAccountInfo.UserInfo)."""
    extra: dict[str, tuple[str, ...]] = {}
    if pod is not None and pod[0] and pod[1]:
        extra[_EXTRA + "pod-name"], extra[_EXTRA + "pod-uid"] = (pod[0],), (pod[1],)
    if isinstance(jti, str) and jti:
        extra[_EXTRA + "credential-id"] = (f"JTI={jti}",)
    if node is not None and node[0]:
        extra[_EXTRA + "node-name"] = (node[0],)
        if node[1]:
            extra[_EXTRA + "node-uid"] = (node[1],)
    return UserInfo(f"system:serviceaccount:{namespace}:{name}", uid,
                    ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"), extra)


def _in(lookup: Lookup, namespace: str) -> Callable[[str], Obj | None]:
    return lambda name: lookup(namespace, name)


def _ref(value: object) -> tuple[str, str] | None:
    """(name, uid) of a claim's {name, uid}; the uid may be empty (a node not found at issue)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    uid = value.get("uid", "")
    return (value["name"], uid) if isinstance(uid, str) else None


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _deleted_before(obj: Obj, when: float) -> bool:
    try:
        deleted = parse_time((obj.get("metadata") or {}).get("deletionTimestamp"))
    except ValueError:
        return False
    return deleted is not None and deleted.timestamp() < when
