"""pod-template-hash: FNV-1a over the template's canonical JSON, rendered with SafeEncodeString."""

from __future__ import annotations

import struct

import pytest

from controllers.deployment.util import (
    ALPHANUMS,
    POD_TEMPLATE_HASH_LABEL,
    compute_hash,
    equal_ignore_hash,
    fnv32a,
    safe_encode_string,
    template_json,
)
from kube.api import PodTemplateSpec
from tests.controllers.builders import make_deployment

# The builders' template, as the hash sees it: wire form, sorted keys, no whitespace.
TEMPLATE_JSON = b'{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.25","name":"web"}]}}'
# fnv32a(TEMPLATE_JSON) = 1568151163 (0x5d78167b; cross-checked with an independent FNV-1a implementation).
# SafeEncodeString maps each decimal digit c to ALPHANUMS[ord(c) % 27]:
#   "1"->5 "5"->9 "6"->b "8"->d "1"->5 "5"->9 "1"->5 "1"->5 "6"->b "3"->7
TEMPLATE_FNV = 1568151163
TEMPLATE_HASH = "59bd5955b7"
# With collisionCount=1, FNV continues over b"\x01\x00\x00\x00" + 4 zero bytes: 1930177466.
TEMPLATE_HASH_COLLISION_1 = "5f745cc8bb"


@pytest.mark.parametrize(("data", "expected"), [
    (b"", 0x811C9DC5),        # the FNV-1a 32-bit offset basis
    (b"a", 0xE40C292C),       # reference vectors of the FNV specification
    (b"foobar", 0xBF9CF968),
])
def test_fnv32a_matches_reference_vectors(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_fnv32a_continues_like_go_hash_write() -> None:
    assert fnv32a(b"bar", fnv32a(b"foo")) == fnv32a(b"foobar")


def test_safe_encode_string_maps_digits_into_the_alphabet() -> None:
    assert safe_encode_string("0123456789") == "456789bcdf"
    assert all(ch in ALPHANUMS for ch in safe_encode_string("any text at all"))


def test_known_template_hash() -> None:
    template = make_deployment().obj().spec.template
    assert template_json(template) == TEMPLATE_JSON
    assert fnv32a(TEMPLATE_JSON) == TEMPLATE_FNV
    assert safe_encode_string(str(TEMPLATE_FNV)) == TEMPLATE_HASH
    assert compute_hash(template) == TEMPLATE_HASH


def test_collision_count_is_hashed_as_eight_little_endian_bytes() -> None:
    template = make_deployment().obj().spec.template
    continued = fnv32a(struct.pack("<I", 1) + b"\0\0\0\0", TEMPLATE_FNV)
    assert compute_hash(template, 1) == safe_encode_string(str(continued)) == TEMPLATE_HASH_COLLISION_1
    assert compute_hash(template, 0) != compute_hash(template)  # a set count, even 0, is hashed
    assert len({compute_hash(template, n) for n in range(20)}) == 20


def test_hash_ignores_key_order_and_follows_content() -> None:
    a = PodTemplateSpec.model_validate({"metadata": {"labels": {"a": "1", "b": "2"}},
                                        "spec": {"containers": [{"name": "c", "image": "x"}]}})
    b = PodTemplateSpec.model_validate({"spec": {"containers": [{"image": "x", "name": "c"}]},
                                        "metadata": {"labels": {"b": "2", "a": "1"}}})
    c = PodTemplateSpec.model_validate({"metadata": {"labels": {"a": "1", "b": "2"}},
                                        "spec": {"containers": [{"name": "c", "image": "y"}]}})
    assert compute_hash(a) == compute_hash(b)
    assert compute_hash(a) != compute_hash(c)


def test_equal_ignore_hash() -> None:
    deployment_template = make_deployment().obj().spec.template
    rs_template = deployment_template.model_copy(deep=True)
    rs_template.metadata.labels = {**(rs_template.metadata.labels or {}), POD_TEMPLATE_HASH_LABEL: TEMPLATE_HASH}
    assert equal_ignore_hash(deployment_template, rs_template)
    rs_template.spec.containers[0].image = "nginx:1.26"
    assert not equal_ignore_hash(deployment_template, rs_template)


def test_equal_ignore_hash_when_the_hash_is_the_only_label() -> None:
    bare = PodTemplateSpec.model_validate({"spec": {"containers": [{"name": "c", "image": "x"}]}})
    labelled = bare.model_copy(deep=True)
    labelled.metadata.labels = {POD_TEMPLATE_HASH_LABEL: "abc"}
    assert equal_ignore_hash(bare, labelled)
