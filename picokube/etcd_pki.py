"""etcd's own certificate authority and certificates, laid out as kubeadm lays them out.

etcd serves only TLS and accepts only clients whose certificate its CA signed
(`--client-cert-auth`), so whoever reaches its port without one of those keys can read
nothing. As kubeadm does, the etcd CA is separate from the cluster CA: a certificate the
cluster CA signs for a user or a node must not open etcd.

Files (under the data dir's `pki/`):
- `etcd/ca.crt`, `etcd/ca.key`: the etcd CA;
- `etcd/server.{crt,key}`, `etcd/peer.{crt,key}`: the one member of a single-member
  cluster, serving clients and peers; a named member of a larger cluster gets the same two
  pairs in `etcd/<member>/`, as each kubeadm machine holds its own `etcd/server.crt`;
- `etcd/healthcheck-client.{crt,key}`: for probes such as `etcdctl endpoint health`;
- `apiserver-etcd-client.{crt,key}`: the API server's client certificate.

Server and peer certificates name `localhost`, `127.0.0.1`, `::1`, this host's name and
whatever hosts the caller adds (a compose service name, a member's address), and are good
for both server and client auth, as etcd needs. Everything is idempotent (kept while valid,
via `pki.ensure_leaf`), keys are 0600 and the directories 0700.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from picokube._files import make_private_dir
from picokube.pki import ClusterPki, ensure_ca, ensure_leaf, issue_client_certificate, issue_serving_certificate

__all__ = ["EtcdMemberPki", "EtcdPki", "ensure_etcd_member", "ensure_etcd_pki", "split_hosts"]

ETCD_CA_NAME = "etcd-ca"
APISERVER_CLIENT = "apiserver-etcd-client"
HEALTHCHECK_CLIENT = "healthcheck-client"
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class EtcdMemberPki:
    """The serving and peer certificate files of one etcd member."""

    directory: Path

    @property
    def server_cert(self) -> Path:
        return self.directory / "server.crt"

    @property
    def server_key(self) -> Path:
        return self.directory / "server.key"

    @property
    def peer_cert(self) -> Path:
        return self.directory / "peer.crt"

    @property
    def peer_key(self) -> Path:
        return self.directory / "peer.key"


@dataclass(frozen=True)
class EtcdPki:
    """Where etcd's PKI lives, given the data dir's `pki/`."""

    pki_dir: Path

    @property
    def ca(self) -> ClusterPki:
        return ClusterPki(self.pki_dir / "etcd")

    def member(self, name: str | None = None) -> EtcdMemberPki:
        """The files of member `name`; None: the one member of a single-member cluster."""
        return EtcdMemberPki(self.ca.directory if name is None else self.ca.directory / name)

    @property
    def apiserver_client_cert(self) -> Path:
        return self.pki_dir / f"{APISERVER_CLIENT}.crt"

    @property
    def apiserver_client_key(self) -> Path:
        return self.pki_dir / f"{APISERVER_CLIENT}.key"

    @property
    def healthcheck_client_cert(self) -> Path:
        return self.ca.directory / f"{HEALTHCHECK_CLIENT}.crt"

    @property
    def healthcheck_client_key(self) -> Path:
        return self.ca.directory / f"{HEALTHCHECK_CLIENT}.key"


def ensure_etcd_pki(pki_dir: Path, *, hosts: Sequence[str] = ()) -> EtcdPki:
    """The etcd CA, the client certificates and the single member's certificates for `hosts`.

    Not safe to run concurrently for one directory (callers hold the data dir's lock).
    """
    etcd = EtcdPki(pki_dir)
    ca = ensure_ca(etcd.ca.directory, common_name=ETCD_CA_NAME)
    # kubeadm's subjects: the API server's certificate is in system:masters, as etcd's RBAC
    # (when enabled) would map it; the health probe's is in no group.
    ensure_leaf(ca, APISERVER_CLIENT, lambda: issue_client_certificate(
        ca, user="kube-apiserver-etcd-client", groups=("system:masters",)), directory=pki_dir)
    ensure_leaf(ca, HEALTHCHECK_CLIENT, lambda: issue_client_certificate(ca, user="kube-etcd-healthcheck-client"))
    ensure_etcd_member(etcd, None, hosts=hosts)
    return etcd


def ensure_etcd_member(etcd: EtcdPki, name: str | None, *, hosts: Sequence[str] = ()) -> EtcdMemberPki:
    """Member `name`'s server and peer certificates (see `EtcdPki.member`), naming `hosts` too.

    The etcd CA must exist (`ensure_etcd_pki`). A member whose certificates lack one of the
    hosts asked for keeps them: pass the full set the first time, or delete the pair.
    """
    member = etcd.member(name)
    make_private_dir(member.directory)
    ca = etcd.ca
    ips, dns = split_hosts((*_LOCAL_HOSTS, socket.gethostname(), *hosts))
    cn = name or socket.gethostname()
    for stem in ("server", "peer"):
        ensure_leaf(ca, stem, lambda: issue_serving_certificate(
            ca, name=cn, ips=ips, dns_names=dns, client_auth=True), directory=member.directory)
    return member


def split_hosts(hosts: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(IP addresses, DNS names) among `hosts`, each once, in order."""
    ips: dict[str, None] = {}
    dns: dict[str, None] = {}
    for host in hosts:
        try:
            ips[str(ipaddress.ip_address(host))] = None
        except ValueError:
            dns[host] = None
    return tuple(ips), tuple(dns)
