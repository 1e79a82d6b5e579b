"""Which volume a claim binds to (kube.volume_matching), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from kube.api import Node, PersistentVolume, PersistentVolumeClaim
from kube.volume_matching import find_matching_volume, volume_allows_node, volume_mismatch


def volume(name: str, size: str = "1Gi", *, cls: str = "gold", modes: tuple[str, ...] = ("ReadWriteOnce",),
           labels: dict[str, str] | None = None, phase: str = "Available", claim_ref: dict[str, str] | None = None,
           node: str | None = None) -> PersistentVolume:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
                            "hostPath": {"path": f"/v/{name}"}, "claimRef": claim_ref}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return PersistentVolume.model_validate({"metadata": {"name": name, "labels": labels}, "spec": spec,
                                            "status": {"phase": phase}})


def claim(size: str = "1Gi", *, cls: str = "gold", modes: tuple[str, ...] = ("ReadWriteOnce",),
          selector: dict[str, str] | None = None) -> PersistentVolumeClaim:
    spec: dict[str, Any] = {"accessModes": list(modes), "storageClassName": cls,
                            "resources": {"requests": {"storage": size}}}
    if selector:
        spec["selector"] = {"matchLabels": selector}
    return PersistentVolumeClaim.model_validate({"metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
                                                 "spec": spec})


@pytest.mark.parametrize(("the_claim", "volumes", "expected"), [
    (claim("1Gi"), [volume("big", "10Gi"), volume("small", "2Gi"), volume("tiny", "500Mi")], "small"),
    (claim("1Gi", cls="silver"), [volume("gold", "1Gi")], None),
    (claim("1Gi", cls=""), [volume("none", "1Gi", cls="")], "none"),
    (claim(modes=("ReadWriteMany",)), [volume("rwo"), volume("rwx", "5Gi", modes=("ReadWriteOnce", "ReadWriteMany"))],
     "rwx"),
    (claim(selector={"tier": "fast"}), [volume("slow", labels={"tier": "slow"}), volume("fast", "3Gi",
                                                                                      labels={"tier": "fast"})],
     "fast"),
    (claim(), [volume("released", phase="Released"), volume("failed", phase="Failed")], None),
    (claim(), [volume("other", claim_ref={"namespace": "ns", "name": "someone-else"})], None),
    (claim(), [volume("small"), volume("pre-bound", "9Gi", claim_ref={"namespace": "ns", "name": "c"})],
     "pre-bound"),
    (claim(), [volume("stale-uid", claim_ref={"namespace": "ns", "name": "c", "uid": "old"})], None),
])
def test_find_matching_volume(the_claim: PersistentVolumeClaim, volumes: list[PersistentVolume],
                              expected: str | None) -> None:
    found = find_matching_volume(the_claim, volumes)
    assert (found.metadata.name if found is not None else None) == expected


def test_selected_node_must_be_admitted_by_node_affinity() -> None:
    node_b = Node.model_validate({"metadata": {"name": "b", "labels": {"kubernetes.io/hostname": "b"}}})
    volumes = [volume("on-a", node="a"), volume("on-b", "5Gi", node="b")]
    found = find_matching_volume(claim(), volumes, node=node_b)
    assert found is not None and found.metadata.name == "on-b"
    assert volume_allows_node(volume("anywhere"), node_b)
    assert not volume_allows_node(volumes[0], node_b)


@pytest.mark.parametrize(("the_volume", "expected"), [
    (volume("ok", "2Gi"), None),
    (volume("small", "500Mi"), "requested PV is too small"),
    (volume("silver", cls="silver"), "storageClassName does not match"),
    (volume("rox", modes=("ReadOnlyMany",)), "incompatible accessMode"),
])
def test_volume_mismatch_of_a_claim_naming_its_volume(the_volume: PersistentVolume, expected: str | None) -> None:
    assert volume_mismatch(the_volume, claim()) == expected
