"""Value transformers: how a stored value is encrypted on its way to etcd and back.

Mirrors k8s.io/apiserver pkg/storage/value (the `Transformer` interface and the prefix
transformer) and pkg/storage/value/encrypt/{aes,secretbox,identity}. The wire formats are
upstream's, so data written here reads as kube-apiserver's would:

* aesgcm:    ``k8s:enc:aesgcm:v1:<key name>:`` + 12-byte nonce + AES-GCM ciphertext and tag,
             with the etcd key as additional authenticated data (a value copied to another
             key does not decrypt);
* secretbox: ``k8s:enc:secretbox:v1:<key name>:`` + 24-byte nonce + XSalsa20-Poly1305 box
             (needs PyNaCl; without it a secretbox provider is refused when the config loads);
* identity:  the value unchanged.

`PrefixTransformer` holds the providers in configured order: the first one writes, and every
one of them can read (the one whose prefix the value carries), which is what makes key
rotation work. Invariants: `transform_to_storage` never returns plaintext unless the first
provider is identity; `transform_from_storage` either returns exactly what was written or
raises `TransformError` (a wrong key, a tampered value, a prefix no provider knows) - never
garbage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["Transformer", "TransformError", "IdentityTransformer", "AESGCMTransformer", "SecretboxTransformer",
           "PrefixTransformer", "ENCRYPTED_PREFIX", "secretbox_available"]

logger = logging.getLogger(__name__)

ENCRYPTED_PREFIX = b"k8s:enc:"
_GCM_NONCE = 12
_SECRETBOX_NONCE = 24


class TransformError(Exception):
    """A stored value could not be turned back into the data written (or data into a value)."""


class Transformer(Protocol):
    """Turns data into the bytes stored under a key and back; `key` is the etcd key."""

    def transform_to_storage(self, data: bytes, key: str) -> bytes:
        """The bytes to store for `data`. Safe to call concurrently."""
        ...

    def transform_from_storage(self, value: bytes, key: str) -> bytes:
        """The data `value` was made from. Raises TransformError. Safe to call concurrently."""
        ...


class IdentityTransformer:
    """Stores data as it is; refuses to read a value that an encrypting provider wrote."""

    def transform_to_storage(self, data: bytes, key: str) -> bytes:
        return data

    def transform_from_storage(self, value: bytes, key: str) -> bytes:
        if value.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return value


class AESGCMTransformer:
    """AES-GCM with a random nonce per write (key of 16, 24 or 32 bytes)."""

    def __init__(self, key: bytes) -> None:
        if len(key) not in (16, 24, 32):
            raise ValueError(f"aesgcm key must be 16, 24 or 32 bytes, got {len(key)}")
        self._aead = AESGCM(key)

    def transform_to_storage(self, data: bytes, key: str) -> bytes:
        nonce = os.urandom(_GCM_NONCE)
        return nonce + self._aead.encrypt(nonce, data, key.encode())

    def transform_from_storage(self, value: bytes, key: str) -> bytes:
        if len(value) < _GCM_NONCE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._aead.decrypt(value[:_GCM_NONCE], value[_GCM_NONCE:], key.encode())
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None


def secretbox_available() -> bool:
    """Whether PyNaCl (needed by the secretbox provider) can be imported."""
    try:
        import nacl.secret  # noqa: F401
    except ImportError:
        return False
    return True


class SecretboxTransformer:
    """XSalsa20-Poly1305 (NaCl secretbox) with a random nonce per write (key of 32 bytes)."""

    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError(f"secretbox key must be 32 bytes, got {len(key)}")
        try:
            import nacl.secret
        except ImportError:
            raise ValueError("the secretbox provider needs PyNaCl, which is not installed; "
                             "use aesgcm instead") from None
        self._box = nacl.secret.SecretBox(key)

    def transform_to_storage(self, data: bytes, key: str) -> bytes:
        nonce = os.urandom(_SECRETBOX_NONCE)
        return bytes(self._box.encrypt(data, nonce))

    def transform_from_storage(self, value: bytes, key: str) -> bytes:
        import nacl.exceptions
        if len(value) < _SECRETBOX_NONCE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return bytes(self._box.decrypt(value))
        except nacl.exceptions.CryptoError:
            raise TransformError("output array was not large enough for encryption") from None


class PrefixTransformer:
    """Providers in order, each behind its prefix: the first writes, the one a value names reads.

    Identity has the empty prefix, so it reads anything no other provider claimed.
    """

    def __init__(self, providers: Sequence[tuple[bytes, Transformer]]) -> None:
        if not providers:
            raise ValueError("at least one provider is required")
        self._providers = list(providers)

    def transform_to_storage(self, data: bytes, key: str) -> bytes:
        prefix, transformer = self._providers[0]
        return prefix + transformer.transform_to_storage(data, key)

    def transform_from_storage(self, value: bytes, key: str) -> bytes:
        return self.read(value, key)[0]

    def read(self, value: bytes, key: str) -> tuple[bytes, bool]:
        """(data, stale): stale when a provider other than the first opened it. Raises TransformError."""
        errors: list[str] = []
        for i, (prefix, transformer) in enumerate(self._providers):
            if value.startswith(prefix):
                try:
                    return transformer.transform_from_storage(value[len(prefix):], key), i > 0
                except TransformError as e:
                    errors.append(str(e))
        if errors:
            raise TransformError(errors[0])
        raise TransformError("no matching prefix found")
