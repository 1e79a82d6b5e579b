"""Joining's pure parts: the bootstrap token format and Secret, the CA hash kubeadm pins, the
Go durations `--ttl` takes, and when a client certificate is renewed."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import random
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kube.bootstraptoken import bootstrap_secret, decode_secret_data, generate_token, is_expired, parse_token
from kube.csr import ca_cert_hash
from kube.duration import parse_go_duration
from picokube.certificate_manager import rotation_deadline
from picokube.pki import ensure_cluster_pki, issue_client_certificate


def test_generated_tokens_have_the_upstream_format() -> None:
    for _ in range(20):
        token = generate_token()
        assert parse_token(token) == tuple(token.split("."))
    for bad in ("abcdef0123456789abcdef", "ABCDEF.0123456789abcdef", "abcde.0123456789abcdef", "abcdef.0123"):
        assert parse_token(bad) is None


def test_secret_carries_the_token_and_its_expiry() -> None:
    token = "abcdef.0123456789abcdef"
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    secret = bootstrap_secret(token, expiration=now + dt.timedelta(hours=24))
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["metadata"] == {"name": "bootstrap-token-abcdef", "namespace": "kube-system"}
    data = decode_secret_data(secret)
    assert data["token-id"] == "abcdef" and data["token-secret"] == "0123456789abcdef"
    assert data["expiration"] == "2030-01-02T00:00:00Z" and data["usage-bootstrap-authentication"] == "true"
    assert not is_expired(data, now) and is_expired(data, now + dt.timedelta(days=2))
    with pytest.raises(ValueError, match="must match"):
        bootstrap_secret("nope", expiration=None)


def test_ca_hash_is_sha256_of_the_subject_public_key_info(tmp_path: Path) -> None:
    pki = ensure_cluster_pki(tmp_path / "pki")
    pem = pki.ca_pem()
    spki = x509.load_pem_x509_certificate(pem).public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert ca_cert_hash(pem) == "sha256:" + hashlib.sha256(spki).hexdigest()
    with pytest.raises(ValueError):
        ca_cert_hash(base64.b64encode(b"junk"))


@pytest.mark.parametrize(("text", "seconds"), [("24h", 86400.0), ("1h30m", 5400.0), ("90s", 90.0), ("0", 0.0),
                                               ("8760h", 8760 * 3600.0), ("-1h", -3600.0)])
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == seconds


@pytest.mark.parametrize(("text", "message"), [("", "invalid duration"), ("24", "missing unit in duration"),
                                               ("1d", "invalid duration"), ("h", "invalid duration")])
def test_bad_go_durations(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_go_duration(text)


def test_rotation_falls_between_70_and_90_percent_of_the_lifetime(tmp_path: Path) -> None:
    pki = ensure_cluster_pki(tmp_path / "pki")
    cert_pem, _ = issue_client_certificate(pki, user="system:node:n1", groups=("system:nodes",),
                                           validity=dt.timedelta(days=10))
    cert = x509.load_pem_x509_certificate(cert_pem)
    start, life = cert.not_valid_before_utc, cert.not_valid_after_utc - cert.not_valid_before_utc
    for seed in range(20):
        deadline = rotation_deadline(cert_pem, rng=random.Random(seed))
        assert start + life * 0.7 <= deadline <= start + life * 0.9
