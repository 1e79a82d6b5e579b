"""The request path is parsed once, as upstream's RequestInfoFactory does."""

from __future__ import annotations

import pytest

from apiserver.endpoints.request_info import parse_request_info


@pytest.mark.parametrize(("method", "path", "watch", "expected"), [
    ("GET", "/api/v1/pods", None, ("list", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/pods", "true", ("watch", "", "v1", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", None, ("get", "", "v1", "ns", "pods", "p", "log")),
    ("POST", "/api/v1/namespaces/ns/pods/p/binding", None, ("create", "", "v1", "ns", "pods", "p", "binding")),
    ("DELETE", "/api/v1/namespaces/ns/pods", None, ("deletecollection", "", "v1", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns", None, ("get", "", "v1", "ns", "namespaces", "ns", "")),
    ("PUT", "/api/v1/namespaces/ns/finalize", None, ("update", "", "v1", "ns", "namespaces", "ns", "finalize")),
    ("PATCH", "/apis/apps/v1/namespaces/a/deployments/d/scale", None,
     ("patch", "apps", "v1", "a", "deployments", "d", "scale")),
    ("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", None,
     ("get", "rbac.authorization.k8s.io", "v1", "", "clusterroles", "admin", "")),
])
def test_resource_requests(method: str, path: str, watch: str | None,
                           expected: tuple[str, str, str, str, str, str, str]) -> None:
    info = parse_request_info(method, path, watch=watch)
    assert info.is_resource_request
    assert (info.verb, info.api_group, info.api_version, info.namespace, info.resource, info.name,
            info.subresource) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz",
                                  "/openapi/v3/apis/apps/v1", "/version"])
def test_non_resource_requests_are_authorized_by_path(path: str) -> None:
    info = parse_request_info("GET", path)
    assert not info.is_resource_request
    assert (info.verb, info.path) == ("get", path)
