"""Pod template hashing and comparison: how a Deployment names and recognises its ReplicaSets.

Mirrors pkg/controller.ComputeHash and deployment/util.EqualIgnoreHash. Upstream hashes the
Go struct with a spew printer; picokube hashes the template's canonical JSON (wire form,
keys sorted, no whitespace) instead, with the same steps otherwise:

    h = fnv32a(json)                      # 32-bit FNV-1a, offset 2166136261, prime 16777619
    if collisionCount is set:
        h = fnv32a continued over 8 bytes: uint32(collisionCount) little-endian, then 4 zeros
    hash = SafeEncodeString(str(h))       # each decimal digit c -> ALPHANUMS[ord(c) % 27]

SafeEncodeString's alphabet "bcdfghjklmnpqrstvwxz2456789" has no vowels (no words) and no
0/1/3 (no look-alikes), so the digits 0-9 become "4 5 6 7 8 9 b c d f".
The hash is only a name: the new ReplicaSet is found by comparing templates with
`equal_ignore_hash`, so a model change that alters the JSON never strands a Deployment.
"""

from __future__ import annotations

import json
import struct

from kube.api import LabelSelector, PodTemplateSpec

__all__ = [
    "ALPHANUMS",
    "POD_TEMPLATE_HASH_LABEL",
    "compute_hash",
    "equal_ignore_hash",
    "fnv32a",
    "safe_encode_string",
    "selector_with_label",
    "template_json",
    "with_label",
]

POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """32-bit FNV-1a of `data`, continuing from `h` (Go's hash/fnv New32a + Write)."""
    for byte in data:
        h = ((h ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def safe_encode_string(s: str) -> str:
    """apimachinery's rand.SafeEncodeString: map every character into ALPHANUMS."""
    return "".join(ALPHANUMS[ord(ch) % len(ALPHANUMS)] for ch in s)


def template_json(template: PodTemplateSpec) -> bytes:
    """The canonical bytes a template hashes to: its wire form with sorted keys, compact."""
    return json.dumps(template.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def compute_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """The `pod-template-hash` of a Deployment's template (see the module doc)."""
    h = fnv32a(template_json(template))
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF) + b"\0" * 4, h)
    return safe_encode_string(str(h))


def _without_hash(template: PodTemplateSpec) -> dict[str, object]:
    wire = template.to_dict()
    meta = wire.setdefault("metadata", {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != POD_TEMPLATE_HASH_LABEL}
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return wire


def equal_ignore_hash(a: PodTemplateSpec, b: PodTemplateSpec) -> bool:
    """True when two templates differ at most in their pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)


def with_label(labels: dict[str, str] | None, key: str, value: str) -> dict[str, str]:
    """A copy of `labels` with key=value set."""
    return {**(labels or {}), key: value}


def selector_with_label(selector: LabelSelector, key: str, value: str) -> LabelSelector:
    """A copy of `selector` that also requires key=value."""
    copy = selector.model_copy(deep=True)
    copy.match_labels = with_label(copy.match_labels, key, value)
    return copy
