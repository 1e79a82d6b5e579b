"""TransformingStorage against a real etcd: covered keys are ciphertext in etcd, plaintext above.

Every read path (get, list, guaranteed_update, a conflict's current value, delete, watch)
hands up the data written, and a value that does not decrypt is reported as TransformFailed
naming its key, never handed up as data.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import pytest

from apiserver.storage import Etcd3Storage, KeyValue, RevisionConflict, Storage, TransformFailed, WatchEvent
from apiserver.storage.transformer import AESGCMTransformer, PrefixTransformer
from apiserver.storage.transforming import TransformingStorage

pytestmark = pytest.mark.timeout(60)


def _aesgcm(name: str) -> PrefixTransformer:
    return PrefixTransformer([(f"k8s:enc:aesgcm:v1:{name}:".encode(), AESGCMTransformer(os.urandom(32)))])


@pytest.fixture
def secrets_prefix(etcd_prefix: str) -> str:
    return f"{etcd_prefix}secrets/"


@pytest.fixture
def encrypted(storage: Etcd3Storage, secrets_prefix: str) -> TransformingStorage:
    return TransformingStorage(storage, [(secrets_prefix, _aesgcm("k1"))])


async def next_event(events: AsyncIterator[WatchEvent]) -> WatchEvent:
    async def pull() -> WatchEvent:
        while True:
            ev = await events.__anext__()
            if ev.type != "PROGRESS":
                return ev
    return await asyncio.wait_for(pull(), 10)


async def test_covered_keys_are_ciphertext_in_etcd_and_read_back_on_every_path(
        storage: Etcd3Storage, encrypted: TransformingStorage, secrets_prefix: str, etcd_prefix: str) -> None:
    assert isinstance(encrypted, Storage)
    key, other = f"{secrets_prefix}ns/a", f"{etcd_prefix}configmaps/ns/a"
    rev = await encrypted.create(key, b"v1-plaintext")
    await encrypted.create(other, b"plain")
    raw = await storage.get(key)
    assert raw.value.startswith(b"k8s:enc:aesgcm:v1:k1:") and b"plaintext" not in raw.value
    assert (await storage.get(other)).value == b"plain"
    assert (await encrypted.get(key)).value == b"v1-plaintext"
    assert [kv.value for kv in (await encrypted.list(secrets_prefix)).items] == [b"v1-plaintext"]

    events = encrypted.watch(secrets_prefix, after_revision=rev)
    seen: list[bytes] = []

    async def update(current: KeyValue) -> bytes:
        seen.append(current.value)
        return b"v2-plaintext"

    written = await encrypted.guaranteed_update(key, update)
    assert seen == [b"v1-plaintext"] and written.value == b"v2-plaintext"
    ev = await next_event(events)
    assert (ev.type, ev.value, ev.prev_value) == ("MODIFIED", b"v2-plaintext", b"v1-plaintext")
    with pytest.raises(RevisionConflict) as conflict:
        await encrypted.update(key, b"v3", expected_revision=rev)
    assert conflict.value.current is not None and conflict.value.current.value == b"v2-plaintext"
    deleted, _ = await encrypted.delete(key)
    assert deleted.value == b"v2-plaintext"
    ev = await next_event(events)
    assert (ev.type, ev.value) == ("DELETED", b"v2-plaintext")
    await events.aclose()


async def test_a_value_under_another_key_is_reported_by_key_and_the_rest_still_listed(
        storage: Etcd3Storage, encrypted: TransformingStorage, secrets_prefix: str) -> None:
    lost = TransformingStorage(storage, [(secrets_prefix, _aesgcm("k0"))])
    await lost.create(f"{secrets_prefix}ns/lost", b"under a key that is gone")
    rev = await encrypted.create(f"{secrets_prefix}ns/ok", b"fine")
    with pytest.raises(TransformFailed) as get_failed:
        await encrypted.get(f"{secrets_prefix}ns/lost")
    assert str(get_failed.value) == f'unable to transform key "{secrets_prefix}ns/lost": no matching prefix found'
    with pytest.raises(TransformFailed) as list_failed:
        await encrypted.list(secrets_prefix)
    assert list_failed.value.failed_keys == (f"{secrets_prefix}ns/lost",)
    assert list_failed.value.partial is not None
    assert [kv.value for kv in list_failed.value.partial.items] == [b"fine"]

    events = encrypted.watch(secrets_prefix, after_revision=rev)
    await lost.create(f"{secrets_prefix}ns/lost-2", b"x")
    with pytest.raises(TransformFailed):
        await next_event(events)
