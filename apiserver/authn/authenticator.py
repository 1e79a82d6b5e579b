"""Authentication: who is making this request.

An Authenticator looks at a request's headers and returns the UserInfo it proves, or None
when it has no opinion (no credentials of its kind). A presented but invalid credential is
also None here; the pipeline answers 401 when no authenticator accepts the request. Only
the paths in ANONYMOUS_PATHS are served without a user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["ANONYMOUS_PATHS", "Authenticator", "UnionAuthenticator", "UserInfo"]

ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version"})


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)


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
