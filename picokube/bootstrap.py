"""What kubeadm's bootstrap-token phase sets up, so machines can join with a token.

- the `cluster-info` ConfigMap in kube-public: a kubeconfig naming the cluster's server and
  CA (no credentials), which a joining machine reads before it trusts anything and checks
  against the CA hash it was given;
- a Role and RoleBinding in kube-public that let system:anonymous read it
  (`kubeadm:bootstrap-signer-clusterinfo`);
- ClusterRoleBindings: `kubeadm:kubelet-bootstrap` (system:node-bootstrapper for
  system:bootstrappers: may ask for a certificate), `kubeadm:node-autoapprove-bootstrap`
  (nodeclient for system:bootstrappers: csrapproving approves a first certificate) and
  `kubeadm:node-autoapprove-certificate-rotation` (selfnodeclient for system:nodes: renewals);
- bootstrap tokens: Secrets `kube-system/bootstrap-token-<id>` (`create_token`, `list_tokens`,
  `delete_token`).
Everything is created when missing and left as it is otherwise, so it is safe to run on every
`up` and every `token create`. Talks to the API server as the admin over HTTPS.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import yaml

from kube.bootstraptoken import SECRET_TYPE, bootstrap_secret, decode_secret_data, generate_token, secret_name
from kube.client.config import ClientConfig

__all__ = ["create_token", "delete_token", "ensure_join_objects", "list_tokens"]

_RBAC = "/apis/rbac.authorization.k8s.io/v1"
_SECRETS = "/api/v1/namespaces/kube-system/secrets"


def _client(config: ClientConfig) -> httpx.Client:
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    return httpx.Client(base_url=config.server, verify=config.ssl_context(), headers=headers, timeout=30)


def _create(client: httpx.Client, path: str, body: dict[str, Any]) -> None:
    resp = client.post(path, json=body)
    if resp.status_code not in (201, 409):
        raise RuntimeError(f"creating {path}/{body['metadata']['name']}: {resp.status_code} {resp.text[:300]}")


def _binding(name: str, role: str, group: str) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]}


def cluster_info_kubeconfig(server: str, ca_pem: bytes) -> str:
    """The kubeconfig cluster-info holds: the cluster only, as kubeadm writes it."""
    return str(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "", "cluster": {
        "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "contexts": [], "users": [], "current-context": "", "preferences": {}}, sort_keys=False))


def ensure_join_objects(config: ClientConfig, *, server: str) -> None:
    """Create what joining needs (listed above); RuntimeError/httpx.HTTPError when the API server refuses."""
    assert config.ca_data is not None
    role = "kubeadm:bootstrap-signer-clusterinfo"
    with _client(config) as client:
        _create(client, "/api/v1/namespaces/kube-public/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-info", "namespace": "kube-public"},
            "data": {"kubeconfig": cluster_info_kubeconfig(server, config.ca_data)}})
        _create(client, f"{_RBAC}/namespaces/kube-public/roles", {
            "metadata": {"name": role, "namespace": "kube-public"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cluster-info"],
                       "verbs": ["get"]}]})
        _create(client, f"{_RBAC}/namespaces/kube-public/rolebindings", {
            "metadata": {"name": role, "namespace": "kube-public"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:anonymous"}]})
        for binding in (
                _binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", "system:bootstrappers"),
                _binding("kubeadm:node-autoapprove-bootstrap",
                         "system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:bootstrappers"),
                _binding("kubeadm:node-autoapprove-certificate-rotation",
                         "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes")):
            _create(client, f"{_RBAC}/clusterrolebindings", binding)


def create_token(config: ClientConfig, *, ttl: timedelta | None, token: str | None = None,
                 description: str = "") -> str:
    """Store a bootstrap token (a new random one unless given) valid for `ttl` (None: forever); return it."""
    token = token or generate_token()
    expiration = datetime.now(UTC) + ttl if ttl else None
    with _client(config) as client:
        resp = client.post(_SECRETS, json=bootstrap_secret(token, expiration=expiration, description=description))
        if resp.status_code != 201:
            raise RuntimeError(f"creating the token: {resp.status_code} {resp.text[:300]}")
    return token


def list_tokens(config: ClientConfig) -> list[dict[str, str]]:
    """Every bootstrap token's decoded data (id, expiration, usages, groups; never the secret)."""
    with _client(config) as client:
        resp = client.get(_SECRETS, params={"fieldSelector": f"type={SECRET_TYPE}"})
        resp.raise_for_status()
    out = []
    for item in resp.json().get("items") or []:
        data = decode_secret_data(item)
        data.pop("token-secret", None)
        out.append(data)
    return out


def delete_token(config: ClientConfig, token_or_id: str) -> bool:
    """Delete a token by its id or whole value; False when there is no such token."""
    with _client(config) as client:
        resp = client.delete(f"{_SECRETS}/{secret_name(token_or_id.split('.')[0])}")
    if resp.status_code == 404:
        return False
    resp.raise_for_status()
    return True
