"""Token discovery: learn the cluster CA from a server not yet trusted, and check it by its hash.

Mirrors kubeadm's discovery/token (without the JWS signature check): the cluster-info
ConfigMap in kube-public is read without verifying the server's certificate and without
credentials (system:anonymous may read it), and the CA it names is trusted only when the
sha256 of its SubjectPublicKeyInfo equals one of the `--discovery-token-ca-cert-hash` pins.
"""

from __future__ import annotations

import base64
import binascii

import httpx
import yaml

from kube.csr import ca_cert_hash

__all__ = ["DiscoveryError", "discover_ca"]

CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


class DiscoveryError(Exception):
    """The cluster CA could not be learnt or does not match the pin; the message says which."""


def discover_ca(server: str, pin: str, *, timeout: float = 30.0) -> bytes:
    """The cluster CA's PEM, fetched from `server` and matched against `pin` (`sha256:<hex>`)."""
    if not pin.startswith("sha256:") or len(pin) != len("sha256:") + 64:
        raise DiscoveryError(f'invalid discovery token CA certificate hash "{pin}": the format must be '
                             '"sha256:<64 hex characters>"')
    try:
        resp = httpx.get(server.rstrip("/") + CLUSTER_INFO, verify=False, timeout=timeout)
    except httpx.HTTPError as e:
        raise DiscoveryError(f"cannot reach {server}: {e}") from e
    if resp.status_code != 200:
        raise DiscoveryError(f"cannot read the cluster-info ConfigMap from {server}: {resp.status_code} "
                             f"{resp.text[:200]}")
    try:
        kubeconfig = yaml.safe_load((resp.json().get("data") or {}).get("kubeconfig") or "") or {}
        cluster = (kubeconfig.get("clusters") or [{}])[0].get("cluster") or {}
        ca_pem = base64.b64decode(cluster["certificate-authority-data"])
        actual = ca_cert_hash(ca_pem)
    except (KeyError, ValueError, TypeError, binascii.Error, yaml.YAMLError) as e:
        raise DiscoveryError(f"the cluster-info ConfigMap from {server} holds no usable CA: {e}") from e
    if actual.lower() != pin.lower():
        raise DiscoveryError(f'cluster CA found in cluster-info ConfigMap is invalid: none of the public keys '
                             f'"{actual}" are pinned (--discovery-token-ca-cert-hash {pin})')
    return ca_pem
