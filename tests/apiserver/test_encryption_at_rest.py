"""Secrets encrypted at rest, seen from outside: etcd holds ciphertext, the API serves plaintext.

A real API server runs with `--encryption-provider-config`; etcd is read raw with the storage
client. Rotation and a lost key are exercised by rewriting the config and restarting the server.
"""

from __future__ import annotations

import base64
import os
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from apiserver.storage import Etcd3Storage
from apiserver.storage.transformer import AESGCMTransformer, PrefixTransformer
from apiserver.storage.transforming import TransformingStorage
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually


def _write_config(path: Path, *keys: tuple[str, bytes]) -> None:
    lines = ["apiVersion: apiserver.config.k8s.io/v1", "kind: EncryptionConfiguration", "resources:",
             "  - resources: [secrets]", "    providers:", "      - aesgcm:", "          keys:"]
    lines += [f"            - {{name: {name}, secret: {base64.b64encode(secret).decode()}}}" for name, secret in keys]
    lines += ["      - identity: {}"]
    path.write_text("\n".join(lines) + "\n")


KEY1, KEY2 = ("key1", os.urandom(32)), ("key2", os.urandom(32))


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("encryption") / "encryption.yaml"
    _write_config(path, KEY1)
    return path


@pytest.fixture(scope="module")
def enc_api(etcd_endpoint: str, config_file: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    harness = ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint,
                               extra_args=["--encryption-provider-config", str(config_file)])
    with harness:
        yield harness


def _client(api: ApiServerHarness) -> httpx.Client:
    return httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                        headers={"Authorization": f"Bearer {api.token('admin')}"}, timeout=30)


def _secret(name: str, password: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "stringData": {"password": password}}


async def _raw(storage: Etcd3Storage, api: ApiServerHarness, *path: str) -> bytes:
    return (await storage.get(f"{api.prefix}/{'/'.join(path)}")).value


async def test_secret_is_ciphertext_in_etcd_and_plaintext_through_the_api(
        enc_api: ApiServerHarness, storage: Etcd3Storage) -> None:
    with _client(enc_api) as c:
        assert c.post("/api/v1/namespaces/default/secrets", json=_secret("db", "hunter2-at-rest")).status_code == 201
        assert c.post("/api/v1/namespaces/default/configmaps",
                      json={"metadata": {"name": "plain"}, "data": {"k": "visible-value"}}).status_code == 201
        got = c.get("/api/v1/namespaces/default/secrets/db").json()
        assert base64.b64decode(got["data"]["password"]) == b"hunter2-at-rest"
        listed = c.get("/api/v1/namespaces/default/secrets").json()["items"]
        assert any(s["metadata"]["name"] == "db" for s in listed)
    raw = await _raw(storage, enc_api, "secrets", "default", "db")
    assert raw.startswith(b"k8s:enc:aesgcm:v1:key1:")
    assert b"hunter2" not in raw and base64.b64encode(b"hunter2-at-rest") not in raw and b'"db"' not in raw
    assert b"visible-value" in await _raw(storage, enc_api, "configmaps", "default", "plain")


async def test_rotation_keeps_old_secrets_readable_and_a_lost_key_is_an_error_not_a_crash(
        enc_api: ApiServerHarness, config_file: Path, storage: Etcd3Storage) -> None:
    with _client(enc_api) as c:
        for name in ("old", "rewritten"):
            assert c.post("/api/v1/namespaces/default/secrets", json=_secret(name, "with-key1")).status_code == 201
    # Rotation, step 1: the new key first, the old one still there to read.
    _write_config(config_file, KEY2, KEY1)
    enc_api.stop()
    enc_api.start()
    with _client(enc_api) as c:
        got = c.get("/api/v1/namespaces/default/secrets/old")
        assert got.status_code == 200 and base64.b64decode(got.json()["data"]["password"]) == b"with-key1"
        assert c.post("/api/v1/namespaces/default/secrets", json=_secret("new", "written-with-key2")).status_code == 201
        # Step 2: rewrite. An unchanged PUT still writes a Secret read with an old key; a dry run does not.
        assert c.put("/api/v1/namespaces/default/secrets/old", params={"dryRun": "All"},
                     json=got.json()).status_code == 200
        unchanged = c.get("/api/v1/namespaces/default/secrets/rewritten").json()
        put = c.put("/api/v1/namespaces/default/secrets/rewritten", json=unchanged)
        assert put.status_code == 200
        assert put.json()["metadata"]["resourceVersion"] != unchanged["metadata"]["resourceVersion"]
    assert (await _raw(storage, enc_api, "secrets", "default", "new")).startswith(b"k8s:enc:aesgcm:v1:key2:")
    assert (await _raw(storage, enc_api, "secrets", "default", "rewritten")).startswith(b"k8s:enc:aesgcm:v1:key2:")
    assert (await _raw(storage, enc_api, "secrets", "default", "old")).startswith(b"k8s:enc:aesgcm:v1:key1:")

    # Step 3, the old key dropped: the rewritten Secret reads; "old", never rewritten, is unreadable,
    # and nothing else is affected.
    _write_config(config_file, KEY2)
    enc_api.stop()
    enc_api.start()
    with _client(enc_api) as c:
        lost = c.get("/api/v1/namespaces/default/secrets/old")
        assert lost.status_code == 500, lost.text
        status = lost.json()
        assert status["kind"] == "Status" and status["reason"] == "InternalError"
        assert status["message"].startswith(
            f'Internal error occurred: unable to transform key "{enc_api.prefix}/secrets/default/old"')
        for write in (c.put("/api/v1/namespaces/default/secrets/old", json=_secret("old", "y")),
                      c.patch("/api/v1/namespaces/default/secrets/old", json={"data": {}},
                              headers={"Content-Type": "application/merge-patch+json"}),
                      c.delete("/api/v1/namespaces/default/secrets/old")):
            assert (write.status_code, write.json()["message"]) == (500, status["message"]), write.text
        fine = c.get("/api/v1/namespaces/default/secrets/new")
        assert fine.status_code == 200
        assert base64.b64decode(fine.json()["data"]["password"]) == b"written-with-key2"
        # The watch cache serves what it can decrypt; a list from etcd fails as upstream's does.
        cached = c.get("/api/v1/namespaces/default/secrets", params={"resourceVersion": "0"})
        assert cached.status_code == 200
        assert {s["metadata"]["name"] for s in cached.json()["items"]} == {"new", "rewritten"}
        assert c.get("/api/v1/namespaces/default/secrets/rewritten").status_code == 200
        assert c.get("/api/v1/namespaces/default/secrets").status_code == 500
        assert c.get("/readyz").status_code == 200

        # A value under an unknown key appearing while the server runs is left out the same way.
        foreign = TransformingStorage(storage, [(f"{enc_api.prefix}/secrets/", PrefixTransformer(
            [(b"k8s:enc:aesgcm:v1:elsewhere:", AESGCMTransformer(os.urandom(32)))]))])
        await foreign.create(f"{enc_api.prefix}/secrets/default/foreign", b'{"kind":"Secret"}')
        assert c.get("/api/v1/namespaces/default/secrets/foreign").status_code == 500
        assert c.post("/api/v1/namespaces/default/secrets", json=_secret("after", "x")).status_code == 201

        def cached_names() -> set[str]:
            resp = c.get("/api/v1/namespaces/default/secrets", params={"resourceVersion": "0"})
            return {s["metadata"]["name"] for s in resp.json()["items"]} if resp.status_code == 200 else set()

        await eventually(lambda: _now("after" in cached_names()), message="the Secret written after it, cached")
        assert cached_names() == {"new", "rewritten", "after"}
        assert c.get("/readyz").status_code == 200


async def _now(value: object) -> object:
    """`value` as an awaitable, for `eventually` checks that are plain calls."""
    return value
