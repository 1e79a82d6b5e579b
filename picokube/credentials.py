"""Every credential a cluster needs, issued into one directory (or reused from it).

`issue_credentials(dir, server=..., nodes=...)` leaves in `dir`:
- `pki/`: the CA, the API server's serving certificate, its client certificate towards the
  kubelets (`apiserver-kubelet-client`), one serving certificate per kubelet (for its
  node name and the addresses given), and `sa.key`, which signs ServiceAccount tokens;
- `pki/etcd/` and `pki/apiserver-etcd-client.*`: etcd's own CA, its member's serving and
  peer certificates and the API server's client certificate towards it (`etcd_pki`), and,
  for a cluster of named members, each member's pair in `pki/etcd/<member>/` naming it;
- `tokens.csv`: a bearer token for the admin, the controller-manager, the scheduler, the
  proxies, the cluster DNS and each node (`system:node:<name>` in `system:nodes`);
- `encryption-config.yaml`: the API server's `--encryption-provider-config`, a fresh AES-GCM
  key that encrypts Secrets at rest;
- `kubeconfig` (admin), `controller-manager.kubeconfig`, `scheduler.kubeconfig`,
  `kube-proxy.kubeconfig`, `kube-dns.kubeconfig` and `kubelet-<node>.kubeconfig`, each pointing at `server`.

Idempotent: what exists and is still valid is kept, so kubeconfigs handed out before keep
working. `picokube up` and the compose init step both call it; they differ only in the
server URL, the node addresses and etcd's host name. Every key and token file is 0600 and
every directory 0700.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from picokube._files import make_private_dir, write_file_atomic
from picokube.encryption import ENCRYPTION_CONFIG_NAME, ensure_encryption_config
from picokube.etcd_pki import ensure_etcd_member, ensure_etcd_pki, split_hosts
from picokube.kubeconfig import write_kubeconfig
from picokube.pki import (
    ClusterPki,
    ensure_cluster_pki,
    ensure_leaf,
    issue_client_certificate,
    issue_serving_certificate,
)
from picokube.tokens import (
    ADMIN_USER,
    CONTROLLER_MANAGER_USER,
    DNS_USER,
    PROXY_USER,
    SCHEDULER_USER,
    cluster_identities,
    ensure_token_file,
    node_user,
)

__all__ = ["issue_credentials", "kubeconfig_path"]


def kubeconfig_path(directory: Path, component: str) -> Path:
    """`kubeconfig` for the admin, else `<component>.kubeconfig` (`kubelet-node-1.kubeconfig`)."""
    return directory / ("kubeconfig" if component == "admin" else f"{component}.kubeconfig")


def _ensure_signing_key(path: Path) -> None:
    if not path.exists():
        # RSA 2048, as kubeadm's sa.key: tokens are RS256, what OIDC relying parties expect.
        pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        write_file_atomic(path, pem, mode=0o600)


def issue_credentials(directory: Path, *, server: str, nodes: Mapping[str, Sequence[str]],
                      service_cluster_ip_range: str = "10.96.0.0/12",
                      etcd_hosts: Sequence[str] = (), etcd_members: Sequence[str] = (),
                      apiserver_hosts: Sequence[str] = ()) -> tuple[ClusterPki, dict[str, str]]:
    """Issue (or keep) everything listed above; `nodes` maps node name to its IP addresses.

    etcd's certificates name `etcd_hosts` besides this host's loopback addresses and name;
    each of `etcd_members` gets its own pair naming the member (its host name too).
    The API server's serving certificate also names `apiserver_hosts` (names or addresses
    clients dial instead of the server's own, such as a load balancer's).

    The API server's certificate also names the range's first address, the `kubernetes`
    Service's, which in-cluster clients dial. Returns the PKI and the bearer token of each user.
    """
    make_private_dir(directory)
    kubernetes_service_ip = str(ipaddress.ip_network(service_cluster_ip_range, strict=False)[1])
    extra_ips, extra_dns = split_hosts(apiserver_hosts)
    pki = ensure_cluster_pki(directory / "pki", ips=(kubernetes_service_ip, *extra_ips), dns_names=extra_dns)
    ensure_leaf(pki, "apiserver-kubelet-client", lambda: issue_client_certificate(
        pki, user="kube-apiserver-kubelet-client", groups=("system:masters",)))
    for node, ips in nodes.items():
        ensure_leaf(pki, f"kubelet-{node}", lambda node=node, ips=ips: issue_serving_certificate(  # type: ignore[misc]
            pki, name=f"system:node:{node}", ips=tuple(ips), dns_names=(node, "localhost")))
    etcd = ensure_etcd_pki(pki.directory, hosts=etcd_hosts)
    for member in etcd_members:
        ensure_etcd_member(etcd, member, hosts=(member,))
    _ensure_signing_key(pki.directory / "sa.key")
    ensure_encryption_config(directory / ENCRYPTION_CONFIG_NAME)
    entries = ensure_token_file(directory / "tokens.csv", cluster_identities(nodes))
    tokens = {user: e.token for user, e in entries.items()}
    users = {"admin": ADMIN_USER, "controller-manager": CONTROLLER_MANAGER_USER, "scheduler": SCHEDULER_USER,
             "kube-proxy": PROXY_USER, "kube-dns": DNS_USER,
             **{f"kubelet-{n}": node_user(n) for n in nodes}}
    for component, user in users.items():
        write_kubeconfig(kubeconfig_path(directory, component), server=server, ca_pem=pki.ca_pem(), user=user,
                         token=tokens[user])
    return pki, tokens
