"""How the kubelet requests service account tokens: bound to the pod, with the audience and
expiry asked for, reused while fresh, requested again once 80% of the lifetime has passed."""

from __future__ import annotations

from typing import Any

from kube.api import Pod
from kubelet.pod_objects import PodObjects, Token


class TokenAPI:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def request(self, method: str, path: str, *, body: Any = None) -> Any:
        self.requests.append((path, body))
        return {"spec": body["spec"], "status": {"token": f"t{len(self.requests)}"}}


POD = Pod.model_validate({"metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
                          "spec": {"serviceAccountName": "builder", "containers": [{"name": "c"}]}})


async def test_token_is_requested_bound_to_the_pod_and_reused_while_fresh() -> None:
    api = TokenAPI()
    objects = PodObjects(api)
    first = await objects.service_account_token(POD, audience="vault", expiration_seconds=3600)
    again = await objects.service_account_token(POD, audience="vault", expiration_seconds=3600)
    assert first.token == again.token == "t1" and len(api.requests) == 1
    path, body = api.requests[0]
    assert path == "/api/v1/namespaces/ns/serviceaccounts/builder/token"
    assert body["spec"] == {"audiences": ["vault"], "expirationSeconds": 3600,
                            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1"}}
    objects.forget_pod("u1")
    assert (await objects.service_account_token(POD, audience="vault", expiration_seconds=3600)).token == "t2"


def test_token_needs_refresh_after_80_percent_of_its_lifetime() -> None:
    token = Token("t", expires_at=1000.0 + 3600, issued_at=1000.0)
    assert not token.needs_refresh(1000.0 + 0.8 * 3600 - 1)
    assert token.needs_refresh(1000.0 + 0.8 * 3600 + 1)
    assert token.needs_refresh(1000.0 + 3600)
