"""etcd over TLS with client certificates, as `picokube up` runs it, seen by the storage and the API server.

A real etcd serves https only and requires a certificate signed by its own CA: the storage
with the API server's client certificate works end to end (writes, reads, watches), and
every other way in (no certificate, a certificate of another CA, plain HTTP, an unknown
server CA) is refused before any data is exchanged.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apiserver.__main__ import parse_args
from apiserver.storage import Etcd3Storage, EtcdTLSConfig, Unavailable
from kube.component import UsageError
from kube.testing.apiserver import ApiServerHarness
from kube.testing.etcd import EtcdProcess
from kube.testing.eventually import eventually_sync
from picokube.etcd_pki import EtcdPki, ensure_etcd_pki


@pytest.fixture(scope="module")
def tls_etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    with EtcdProcess(data_dir=tmp_path_factory.mktemp("tls") / "etcd", tls=True) as etcd:
        yield etcd


def _apiserver_tls(pki: EtcdPki) -> EtcdTLSConfig:
    return EtcdTLSConfig(ca_file=pki.ca.ca_cert, cert_file=pki.apiserver_client_cert,
                         key_file=pki.apiserver_client_key)


async def test_the_api_servers_certificate_reads_writes_and_watches(tls_etcd: EtcdProcess) -> None:
    assert tls_etcd.endpoint.startswith("https://")
    store = await Etcd3Storage.connect([tls_etcd.endpoint], tls=_apiserver_tls(tls_etcd.tls_pki))
    try:
        assert await store.healthy()
        revision = await store.create("/tls/a", b"one")
        watch = store.watch("/tls/", after_revision=revision - 1)
        first = await asyncio.wait_for(anext(watch), timeout=10)
        assert (first.key, first.value, first.revision) == ("/tls/a", b"one", revision)
        await watch.aclose()
        assert (await store.get("/tls/a")).value == b"one"
    finally:
        await store.close()


@pytest.mark.parametrize("why", ["no client certificate", "a client certificate of another CA",
                                 "an unknown server CA", "plain HTTP"])
async def test_etcd_refuses_every_other_client(tls_etcd: EtcdProcess, tmp_path: Path, why: str) -> None:
    pki, other = tls_etcd.tls_pki, ensure_etcd_pki(tmp_path / "other")
    endpoint, tls = {
        "no client certificate": (tls_etcd.endpoint, EtcdTLSConfig(ca_file=pki.ca.ca_cert)),
        "a client certificate of another CA": (tls_etcd.endpoint, EtcdTLSConfig(
            ca_file=pki.ca.ca_cert, cert_file=other.apiserver_client_cert, key_file=other.apiserver_client_key)),
        "an unknown server CA": (tls_etcd.endpoint, _apiserver_tls(other)),
        "plain HTTP": (tls_etcd.endpoint.replace("https://", "http://"), None),
    }[why]
    with pytest.raises(Unavailable):
        await Etcd3Storage.connect([endpoint], tls=tls, startup_timeout=1.0)


def test_etcds_http_endpoints_need_a_client_certificate_too(tls_etcd: EtcdProcess) -> None:
    """/health and /metrics share the client port: no certificate, no answer; no plain-HTTP port."""
    pki = tls_etcd.tls_pki
    without = ssl.create_default_context(cafile=str(pki.ca.ca_cert))
    with pytest.raises((httpx.TransportError, ssl.SSLError)):  # the alert may come on the first read, raw
        httpx.get(f"{tls_etcd.endpoint}/metrics", verify=without, timeout=5)
    with pytest.raises(httpx.TransportError):
        httpx.get(tls_etcd.endpoint.replace("https://", "http://") + "/health", timeout=5)
    probe = ssl.create_default_context(cafile=str(pki.ca.ca_cert))
    probe.load_cert_chain(pki.healthcheck_client_cert, pki.healthcheck_client_key)
    answer = httpx.get(f"{tls_etcd.endpoint}/health", verify=probe, timeout=5)
    assert answer.status_code == 200 and answer.json()["health"] == "true"


def test_an_api_server_on_tls_etcd_serves_and_its_readyz_follows_etcd(tls_etcd: EtcdProcess, tmp_path: Path) -> None:
    with ApiServerHarness(tmp_path, etcd_endpoint=tls_etcd.endpoint, extra_args=tls_etcd.api_args()) as api:
        ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
        with httpx.Client(base_url=api.server, verify=ctx, timeout=30,
                          headers={"Authorization": f"Bearer {api.token('admin')}"}) as c:
            assert c.get("/readyz").status_code == 200
            made = c.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "over-tls"}})
            assert made.status_code == 201, made.text
            assert c.get("/api/v1/namespaces/default/configmaps/over-tls").status_code == 200

            tls_etcd.stop()
            try:
                eventually_sync(lambda: c.get("/readyz").status_code != 200, timeout=30, message="readyz failing")
            finally:
                tls_etcd.start()
            eventually_sync(lambda: c.get("/readyz").status_code == 200, timeout=30, message="readyz back")


@pytest.mark.parametrize(("args", "message"), [
    (["--etcd-certfile", "/dev/null"], "--etcd-certfile and --etcd-keyfile must be given together"),
    (["--etcd-cafile", "/nonexistent/ca.crt"], "--etcd-cafile: /nonexistent/ca.crt is not a readable file"),
    (["--etcd-endpoints", "ftp://127.0.0.1:2379"], "--etcd-endpoints: unsupported etcd endpoint scheme 'ftp'"),
])
def test_etcd_flags_are_checked(tmp_path: Path, args: list[str], message: str) -> None:
    base = ["--etcd-endpoints", "https://127.0.0.1:2379", "--tls-cert-file", str(tmp_path / "c"),
            "--tls-private-key-file", str(tmp_path / "k")]
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_args([*base, *args])
