"""Authentication: who is making this request.

An Authenticator looks at a request's headers and returns the UserInfo it proves, or None
when it has no opinion (no credentials of its kind). A presented but invalid credential is
also None here; the pipeline answers 401 when no authenticator accepts the request. Only
the paths in ANONYMOUS_PATHS, and the browser view's static files under ANONYMOUS_PREFIXES
(HTML, JS and CSS that carry no cluster data: the page asks for a token and sends it on
every data call, as the Kubernetes Dashboard does), are served without a user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ANONYMOUS_PATHS", "ANONYMOUS_PREFIXES", "Authenticator", "UnionAuthenticator", "UserInfo",
           "user_info_object"]

ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/ui"})
ANONYMOUS_PREFIXES = ("/ui/",)


@dataclass(frozen=True)
class UserInfo:
    """Who a request is made by, as upstream's user.Info: name, uid, groups and extra.

    `extra` carries what an authenticator (or impersonation) adds beyond name and groups,
    key to values (`authentication.kubernetes.io/pod-name`: (`web-0`,)); it takes no part
    in hashing, so a UserInfo stays usable as a key.
    """

    name: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)


def user_info_object(user: UserInfo) -> dict[str, Any]:
    """authentication.k8s.io/v1 UserInfo on the wire: username, then uid, groups and extra when set."""
    out: dict[str, Any] = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


class Authenticator(Protocol):
    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None: ...


class UnionAuthenticator:
    """Tries each authenticator in order; the first that accepts the request wins."""

    def __init__(self, *authenticators: Authenticator) -> None:
        self.authenticators = authenticators

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        for a in self.authenticators:
            user = a.authenticate(headers)
            if user is not None:
                return user
        return None
