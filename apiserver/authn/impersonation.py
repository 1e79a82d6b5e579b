"""Impersonation: a request made as another user, when its requester may act as that user.

Mirrors apiserver's endpoints/filters/impersonation.go. The headers

    Impersonate-User: jane              (a `system:serviceaccount:<ns>:<name>` name is a ServiceAccount)
    Impersonate-Group: developers       (repeatable)
    Impersonate-Uid: 06f6ce97-...
    Impersonate-Extra-<key>: value      (repeatable; the key is lowercased and %-unescaped)

each ask for one thing, and each is authorized on its own against the *requesting* user with
the verb `impersonate`: `users`, `groups` (API group ""), `serviceaccounts` in the account's
namespace, `uids` and `userextras/<key>` (API group authentication.k8s.io), the value being
the resource name. Guarantees:
- no impersonation header: the requester is left as it is (`impersonate` returns None);
- groups, uid or extra without a user: 400 BadRequest (upstream answers 500 here; bad input
  is a client error), in upstream's words `requested [...] without impersonating a user`;
- any refused part: 403 in upstream's words, e.g. `users "jane" is forbidden: User "bob"
  cannot impersonate resource "users" in API group "" at the cluster scope`;
- otherwise the request runs as the user asked for: its name, uid and extra as given, its
  groups the given ones (a ServiceAccount with none given gets `system:serviceaccounts` and
  `system:serviceaccounts:<ns>`), plus `system:authenticated` unless `system:authenticated`
  or `system:unauthenticated` is among them (`system:unauthenticated` for `system:anonymous`).
Pure: no I/O beyond the authorizer's cache reads, safe to call concurrently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.attributes import Attributes, Authorizer, Decision, forbidden_error
from kube.errors import BadRequest

__all__ = ["ImpersonationRequest", "impersonate", "impersonation_requests"]

USER_HEADER, GROUP_HEADER, UID_HEADER = "impersonate-user", "impersonate-group", "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ANONYMOUS_USER = "system:anonymous"
AUTHENTICATED, UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")


@dataclass(frozen=True)
class ImpersonationRequest:
    """One thing asked for: kind User, ServiceAccount, Group, UserExtra or UID, and its value."""

    kind: str
    name: str
    namespace: str = ""
    extra_key: str = ""

    def attributes(self, requestor: UserInfo) -> Attributes:
        """What the requester must be allowed: `impersonate` on this kind's resource, named by the value."""
        resource, group, subresource = {
            "User": ("users", "", ""), "ServiceAccount": ("serviceaccounts", "", ""), "Group": ("groups", "", ""),
            "UID": ("uids", AUTHENTICATION_GROUP, ""),
            "UserExtra": ("userextras", AUTHENTICATION_GROUP, self.extra_key),
        }[self.kind]
        return Attributes(user=requestor, verb="impersonate", api_group=group, api_version="v1" if group else "",
                          resource=resource, subresource=subresource, namespace=self.namespace, name=self.name)

    def __str__(self) -> str:
        """Go's `%v` of the ObjectReference upstream builds, for upstream's wording of the 400."""
        api_version = "authentication.k8s.io/v1" if self.kind in ("UID", "UserExtra") else ""
        return "{" + " ".join((self.kind, self.namespace, self.name, "", api_version, "", self.extra_key)) + "}"


def _service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a valid `system:serviceaccount:<ns>:<name>` user name, else None."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_PREFIX):].split(":")
    if len(parts) != 2 or not _DNS1123_LABEL.match(parts[0]) or len(parts[0]) > 63 \
            or not _DNS1123_SUBDOMAIN.match(parts[1]) or len(parts[1]) > 253:
        return None
    return parts[0], parts[1]


def _extra_key(encoded: str) -> str:
    """The extra key of a header suffix: lowercased, %-unescaped (kept as sent when malformed)."""
    lowered = encoded.lower()
    return lowered if _BAD_ESCAPE.search(lowered) else unquote(lowered, errors="replace")


def impersonation_requests(headers: Iterable[tuple[bytes, bytes]]) -> list[ImpersonationRequest]:
    """The impersonation asked for by raw (ASGI) headers, user first; empty when none.

    Raises BadRequest when groups, a uid or extra are asked for without a user.
    """
    user = uid = ""
    groups: list[ImpersonationRequest] = []
    extras: list[ImpersonationRequest] = []
    for raw_key, raw_value in headers:
        key, value = raw_key.decode("latin-1").lower(), raw_value.decode("latin-1").strip()
        if key == USER_HEADER:
            user = user or value
        elif key == UID_HEADER:
            uid = uid or value
        elif key == GROUP_HEADER:
            groups.append(ImpersonationRequest("Group", value))
        elif key.startswith(EXTRA_PREFIX):
            extras.append(ImpersonationRequest("UserExtra", value, extra_key=_extra_key(key[len(EXTRA_PREFIX):])))
    requests: list[ImpersonationRequest] = []
    if user:
        sa = _service_account(user)
        requests.append(ImpersonationRequest("ServiceAccount", sa[1], namespace=sa[0]) if sa
                        else ImpersonationRequest("User", user))
    requests += groups + extras
    if uid:
        requests.append(ImpersonationRequest("UID", uid))
    if requests and not user:
        raise BadRequest(f"requested [{' '.join(str(r) for r in requests)}] without impersonating a user")
    return requests


def _with_all_group(username: str, groups: list[str]) -> tuple[str, ...]:
    if username == ANONYMOUS_USER:
        return tuple(groups) if UNAUTHENTICATED in groups else (*groups, UNAUTHENTICATED)
    if AUTHENTICATED in groups or UNAUTHENTICATED in groups:
        return tuple(groups)
    return (*groups, AUTHENTICATED)


def impersonate(requestor: UserInfo, headers: Iterable[tuple[bytes, bytes]],
                authorizer: Authorizer) -> UserInfo | None:
    """The user to run the request as, or None when no impersonation is asked for.

    Raises BadRequest (groups/uid/extra without a user) or Forbidden (the first part the
    requester may not impersonate, in upstream's words).
    """
    requests = impersonation_requests(headers)
    if not requests:
        return None
    username, uid = "", ""
    groups_given = any(r.kind == "Group" for r in requests)
    groups: list[str] = []
    extra: dict[str, tuple[str, ...]] = {}
    for r in requests:
        attrs = r.attributes(requestor)
        decision, reason = authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden_error(attrs, reason)
        if r.kind == "User":
            username = r.name
        elif r.kind == "ServiceAccount":
            username = f"{SERVICE_ACCOUNT_PREFIX}{r.namespace}:{r.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{r.namespace}"]
        elif r.kind == "Group":
            groups.append(r.name)
        elif r.kind == "UserExtra":
            extra[r.extra_key] = (*extra.get(r.extra_key, ()), r.name)
        else:
            uid = r.name
    return UserInfo(username, uid, _with_all_group(username, groups), extra)
