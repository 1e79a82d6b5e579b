"""Value transformers and the EncryptionConfiguration file: upstream's formats and rules."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver.__main__ import parse_args
from apiserver.storage.encryption_config import parse_encryption_config
from apiserver.storage.transformer import TransformError, secretbox_available
from kube.component import UsageError
from kube.resources import RESOURCES

KEY = "/registry/secrets/default/s1"


def _key(n: int = 32) -> str:
    return base64.b64encode(os.urandom(n)).decode()


def _config(*providers: dict[str, Any], resources: tuple[str, ...] = ("secrets",)) -> dict[str, Any]:
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
            "resources": [{"resources": list(resources), "providers": list(providers)}]}


def _aesgcm(*keys: tuple[str, str]) -> dict[str, Any]:
    return {"aesgcm": {"keys": [{"name": n, "secret": s} for n, s in keys]}}


def _secrets(doc: dict[str, Any]) -> Any:
    transformer = parse_encryption_config(doc).transformer_for("secrets", "")
    assert transformer is not None
    return transformer


def test_aesgcm_writes_upstream_prefix_and_reads_back() -> None:
    t = _secrets(_config(_aesgcm(("key1", _key()))))
    stored = t.transform_to_storage(b'{"data":{"password":"hunter2"}}', KEY)
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:")
    assert b"hunter2" not in stored
    assert t.transform_from_storage(stored, KEY) == b'{"data":{"password":"hunter2"}}'


def test_value_moved_to_another_key_does_not_decrypt() -> None:
    t = _secrets(_config(_aesgcm(("key1", _key(16)))))
    stored = t.transform_to_storage(b"data", KEY)
    with pytest.raises(TransformError, match="authentication failed"):
        t.transform_from_storage(stored, "/registry/secrets/default/other")


def test_rotation_new_key_first_reads_old_and_writes_new() -> None:
    old, new = ("key1", _key()), ("key2", _key())
    stored_old = _secrets(_config(_aesgcm(old))).transform_to_storage(b"old", KEY)
    rotated = _secrets(_config(_aesgcm(new, old)))
    assert rotated.read(stored_old, KEY) == (b"old", True)  # stale: an update rewrites it under key2
    stored_new = rotated.transform_to_storage(b"new", KEY)
    assert stored_new.startswith(b"k8s:enc:aesgcm:v1:key2:") and rotated.read(stored_new, KEY) == (b"new", False)
    with pytest.raises(TransformError):
        _secrets(_config(_aesgcm(new))).transform_from_storage(stored_old, KEY)


def test_identity_first_writes_plaintext_and_still_reads_encrypted() -> None:
    k = ("key1", _key())
    stored = _secrets(_config(_aesgcm(k))).transform_to_storage(b"secret", KEY)
    t = _secrets(_config({"identity": {}}, _aesgcm(k)))
    assert t.transform_to_storage(b"plain", KEY) == b"plain"
    assert t.transform_from_storage(stored, KEY) == b"secret"


def test_unknown_prefix_and_identity_on_encrypted_data_are_errors() -> None:
    stored = _secrets(_config(_aesgcm(("key1", _key())))).transform_to_storage(b"x", KEY)
    with pytest.raises(TransformError, match="identity transformer tried to read encrypted data"):
        _secrets(_config({"identity": {}})).transform_from_storage(stored, KEY)
    with pytest.raises(TransformError, match="no matching prefix found"):
        _secrets(_config(_aesgcm(("key2", _key())))).transform_from_storage(b"plain", KEY)


@pytest.mark.parametrize(("doc", "message"), [
    (_config(_aesgcm(("key1", base64.b64encode(b"short").decode()))),
     "resources[0].providers[0].aesgcm.keys[0].secret"),
    (_config(_aesgcm(("key1", "not base64!"))), "aesgcm.keys[0].secret"),
    (_config(_aesgcm(("a", _key()), ("a", _key()))), "Duplicate value"),
    (_config({"aescbc": {"keys": [{"name": "k", "secret": _key()}]}}), "Unsupported value: 'aescbc'"),
    (_config(), "providers: Required value"),
    ({"kind": "EncryptionConfiguration", "resources": []}, "apiVersion/kind"),
])
def test_bad_configuration_is_refused_with_its_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_encryption_config(doc)
    assert message in str(e.value)


def test_secret_never_appears_in_an_error() -> None:
    secret = base64.b64encode(b"0123456789").decode()
    with pytest.raises(ValueError) as e:
        parse_encryption_config(_config(_aesgcm(("key1", secret))))
    assert secret not in str(e.value) and "REDACTED" in str(e.value)


def test_secretbox_needs_pynacl() -> None:
    doc = _config({"secretbox": {"keys": [{"name": "k", "secret": _key()}]}})
    if secretbox_available():
        t = _secrets(doc)
        stored = t.transform_to_storage(b"x", KEY)
        assert stored.startswith(b"k8s:enc:secretbox:v1:k:") and t.transform_from_storage(stored, KEY) == b"x"
    else:
        with pytest.raises(ValueError, match="PyNaCl"):
            parse_encryption_config(doc)


def test_key_prefixes_cover_named_wildcard_and_custom_resources() -> None:
    aes = _aesgcm(("k", _key()))
    config = parse_encryption_config(_config(aes, resources=("secrets", "*.apps", "widgets.example.com")))
    prefixes = {p for p, _ in config.key_prefixes("/registry", RESOURCES)}
    assert {"/registry/secrets/", "/registry/deployments/", "/registry/example.com/widgets/"} <= prefixes
    assert "/registry/configmaps/" not in prefixes and "/registry/pods/" not in prefixes


def test_the_api_server_refuses_to_start_with_a_bad_encryption_config(tmp_path: Path) -> None:
    bad = tmp_path / "encryption.yaml"
    bad.write_text("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
                   "  - resources: [secrets]\n    providers: [{aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}}]\n")
    flags = ["--etcd-endpoints", "http://127.0.0.1:2379", "--tls-cert-file", "c", "--tls-private-key-file", "k"]
    with pytest.raises(UsageError, match=r"--encryption-provider-config: .*keys\[0\]\.secret"):
        parse_args([*flags, "--encryption-provider-config", str(bad)])
    with pytest.raises(UsageError, match="error reading encryption provider configuration file"):
        parse_args([*flags, "--encryption-provider-config", str(tmp_path / "missing.yaml")])
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(_config(_aesgcm(("k", _key())))))
    assert parse_args([*flags, "--encryption-provider-config", str(good)]).encryption_provider_config == good
