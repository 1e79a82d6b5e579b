"""What the Impersonate-* headers ask for, and whom a request then runs as (pure, table-driven)."""

from __future__ import annotations

import pytest

from apiserver.authn import UserInfo
from apiserver.authn.impersonation import ImpersonationRequest, impersonate, impersonation_requests
from apiserver.authz import Attributes, Decision
from kube.errors import BadRequest, Forbidden


def h(*pairs: tuple[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in pairs]


@pytest.mark.parametrize(("headers", "expected"), [
    ([], []),
    ([("Authorization", "Bearer x")], []),
    ([("Impersonate-User", "jane")], [ImpersonationRequest("User", "jane")]),
    ([("Impersonate-User", "system:serviceaccount:ns-1:builder")],
     [ImpersonationRequest("ServiceAccount", "builder", namespace="ns-1")]),
    # Not a valid ServiceAccount user name: impersonated as a plain user, as upstream.
    ([("Impersonate-User", "system:serviceaccount:Bad_NS:x")],
     [ImpersonationRequest("User", "system:serviceaccount:Bad_NS:x")]),
    ([("Impersonate-User", "system:serviceaccount:a:b:c")],
     [ImpersonationRequest("User", "system:serviceaccount:a:b:c")]),
    ([("Impersonate-Uid", "u"), ("Impersonate-Group", "g1"), ("Impersonate-User", "jane"),
      ("Impersonate-Group", "g2"), ("Impersonate-Extra-Example.com%2FScopes", "read")],
     [ImpersonationRequest("User", "jane"), ImpersonationRequest("Group", "g1"), ImpersonationRequest("Group", "g2"),
      ImpersonationRequest("UserExtra", "read", extra_key="example.com/scopes"), ImpersonationRequest("UID", "u")]),
    # A malformed escape keeps the key as sent (lowercased).
    ([("Impersonate-User", "jane"), ("Impersonate-Extra-A%zz", "v")],
     [ImpersonationRequest("User", "jane"), ImpersonationRequest("UserExtra", "v", extra_key="a%zz")]),
])
def test_impersonation_requests(headers: list[tuple[str, str]], expected: list[ImpersonationRequest]) -> None:
    assert impersonation_requests(h(*headers)) == expected


@pytest.mark.parametrize("headers", [
    [("Impersonate-Group", "g")], [("Impersonate-Uid", "u")], [("Impersonate-Extra-Scopes", "x")],
    [("Impersonate-User", ""), ("Impersonate-Group", "g")],
])
def test_anything_without_a_user_is_a_bad_request(headers: list[tuple[str, str]]) -> None:
    with pytest.raises(BadRequest, match="without impersonating a user"):
        impersonation_requests(h(*headers))


class AllowOnly:
    """Allows the listed (resource, name) pairs to the impersonating user; everything else no opinion."""

    def __init__(self, *allowed: tuple[str, str]) -> None:
        self.allowed = set(allowed)

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        ok = attrs.verb == "impersonate" and (attrs.resource_with_sub, attrs.name) in self.allowed
        return (Decision.ALLOW if ok else Decision.NO_OPINION), ""


BOB = UserInfo("bob", "b-1", ("system:authenticated",))


@pytest.mark.parametrize(("headers", "allowed", "expected"), [
    ([("Impersonate-User", "jane")], [("users", "jane")], UserInfo("jane", groups=("system:authenticated",))),
    ([("Impersonate-User", "system:serviceaccount:ns:sa")], [("serviceaccounts", "sa")],
     UserInfo("system:serviceaccount:ns:sa",
              groups=("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"))),
    # Given groups replace the ServiceAccount's own.
    ([("Impersonate-User", "system:serviceaccount:ns:sa"), ("Impersonate-Group", "g")],
     [("serviceaccounts", "sa"), ("groups", "g")], UserInfo("system:serviceaccount:ns:sa",
                                                           groups=("g", "system:authenticated"))),
    ([("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")],
     [("users", "jane"), ("groups", "system:unauthenticated")],
     UserInfo("jane", groups=("system:unauthenticated",))),
    ([("Impersonate-User", "system:anonymous")], [("users", "system:anonymous")],
     UserInfo("system:anonymous", groups=("system:unauthenticated",))),
    ([("Impersonate-User", "jane"), ("Impersonate-Uid", "u-9"), ("Impersonate-Extra-Scopes", "a"),
      ("Impersonate-Extra-Scopes", "b")], [("users", "jane"), ("uids", "u-9"), ("userextras/scopes", "a"),
                                           ("userextras/scopes", "b")],
     UserInfo("jane", "u-9", ("system:authenticated",), {"scopes": ("a", "b")})),
])
def test_impersonate(headers: list[tuple[str, str]], allowed: list[tuple[str, str]], expected: UserInfo) -> None:
    assert impersonate(BOB, h(*headers), AllowOnly(*allowed)) == expected


def test_no_headers_leave_the_requester_as_it_is() -> None:
    assert impersonate(BOB, h(("Accept", "application/json")), AllowOnly()) is None


def test_each_part_must_be_allowed() -> None:
    with pytest.raises(Forbidden) as e:
        impersonate(BOB, h(("Impersonate-User", "jane"), ("Impersonate-Uid", "u-9")), AllowOnly(("users", "jane")))
    assert e.value.message == ('uids.authentication.k8s.io "u-9" is forbidden: User "bob" cannot impersonate '
                               'resource "uids" in API group "authentication.k8s.io" at the cluster scope')
