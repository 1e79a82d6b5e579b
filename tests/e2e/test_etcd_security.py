"""The security defaults of `picokube up`, seen from outside the cluster.

etcd started by `picokube up` serves only TLS and answers only the holder of a certificate
its CA signed (the API server's): a client without one is refused at the TLS handshake,
plain HTTP gets nothing. And a Secret created through the API is stored encrypted: etcd's
raw value is AES-GCM ciphertext under the data dir's encryption key, not the plaintext.
"""

from __future__ import annotations

import base64
import ssl
import uuid

import httpx
import pytest

from apiserver.storage import Etcd3Storage, EtcdTLSConfig, Unavailable
from kube.testing.cluster import Cluster
from picokube.etcd_pki import EtcdPki

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")


def _etcd(cluster: Cluster) -> tuple[str, EtcdPki]:
    urls = cluster.status()["etcd"]
    assert len(urls) == 1 and urls[0].startswith("https://127.0.0.1:"), urls
    return urls[0], EtcdPki(cluster.data_dir / "pki")


def _apiserver_tls(pki: EtcdPki) -> EtcdTLSConfig:
    return EtcdTLSConfig(ca_file=pki.ca.ca_cert, cert_file=pki.apiserver_client_cert,
                         key_file=pki.apiserver_client_key)


async def test_etcd_refuses_a_client_without_a_certificate_and_accepts_the_api_servers(cluster: Cluster) -> None:
    url, pki = _etcd(cluster)
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(pki.ca.ca_cert)), timeout=5) as c:
        # etcd rejects the handshake (with TLS 1.3 the alert may arrive on the first read, raw)
        with pytest.raises((httpx.TransportError, ssl.SSLError)):
            await c.get(f"{url}/health")
        with pytest.raises(httpx.TransportError):  # no plain-HTTP listener on the client port
            await c.get(url.replace("https://", "http://") + "/health")
    with pytest.raises(Unavailable):
        await Etcd3Storage.connect([url], tls=EtcdTLSConfig(ca_file=pki.ca.ca_cert), startup_timeout=1.0)

    store = await Etcd3Storage.connect([url], tls=_apiserver_tls(pki), startup_timeout=10.0)
    try:
        default = await store.get("/registry/namespaces/default")
        assert b"default" in default.value
    finally:
        await store.close()


async def test_a_secret_is_ciphertext_in_etcds_raw_data(cluster: Cluster) -> None:
    name, password = f"s-{uuid.uuid4().hex[:6]}", f"hunter-{uuid.uuid4().hex}"
    cluster.kubectl_ok("create", "secret", "generic", name, f"--from-literal=password={password}")
    shown = cluster.kubectl_ok("get", "secret", name, "-o", "jsonpath={.data.password}")
    assert base64.b64decode(shown).decode() == password

    url, pki = _etcd(cluster)
    store = await Etcd3Storage.connect([url], tls=_apiserver_tls(pki), startup_timeout=10.0)
    try:
        raw = (await store.get(f"/registry/secrets/default/{name}")).value
    finally:
        await store.close()
    assert raw.startswith(b"k8s:enc:aesgcm:v1:key1:")
    assert password.encode() not in raw and base64.b64encode(password.encode()) not in raw
    assert name.encode() not in raw  # the whole object is sealed, metadata included
