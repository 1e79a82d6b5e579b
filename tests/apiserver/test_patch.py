"""Strategic merge patch, JSON merge patch and JSON patch, with cases from the Kubernetes docs.

The strategic cases follow "Update API Objects in Place Using kubectl patch" and the
strategic-merge-patch design document: merge keys, `$patch`, `$setElementOrder`,
`$retainKeys`, `$deleteFromPrimitiveList`, and `null` deletes.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.openapi.schema import node_for_gvk
from apiserver.registry.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

DEPLOY = node_for_gvk("apps", "v1", "Deployment")
POD = node_for_gvk("", "v1", "Pod")


def deployment(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": containers, **spec}}}}


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return containers


CASES = [
    pytest.param(  # docs: adding a container merges by name instead of replacing the list
        deployment([{"name": "patch-demo-ctr", "image": "nginx"}]),
        deployment([{"name": "patch-demo-ctr-2", "image": "redis"}]),
        deployment([{"name": "patch-demo-ctr", "image": "nginx"}, {"name": "patch-demo-ctr-2", "image": "redis"}]),
        id="containers-merge-by-name"),
    pytest.param(  # tolerations have no patch strategy: the list is replaced
        deployment([{"name": "a", "image": "x"}], tolerations=[{"effect": "NoSchedule", "key": "dedicated"}]),
        deployment([], tolerations=[{"effect": "NoSchedule", "key": "disktype"}]) | {},
        None, id="tolerations-replace"),
    pytest.param(
        deployment([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]),
        deployment([{"name": "b", "$patch": "delete"}]),
        deployment([{"name": "a", "image": "x"}]), id="patch-delete-element"),
    pytest.param(
        deployment([{"name": "a", "image": "x", "ports": [{"containerPort": 80}]}]),
        deployment([{"$patch": "replace"}, {"name": "c", "image": "z"}]),
        deployment([{"name": "c", "image": "z"}]), id="patch-replace-list"),
    pytest.param(
        deployment([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]),
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                                        "containers": [{"name": "a", "image": "x2"}]}}}},
        deployment([{"name": "b", "image": "y"}, {"name": "a", "image": "x2"}]), id="set-element-order"),
    pytest.param(
        deployment([{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]),
        deployment([{"name": "a", "env": [{"name": "B", "value": None}]}]),
        deployment([{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"}, {"name": "B"}]}]),
        id="null-deletes-inside-merged-element"),
]


@pytest.mark.parametrize("original,patch,expected", CASES)
def test_strategic_merge_patch(original: dict[str, Any], patch: dict[str, Any], expected: Any) -> None:
    result = strategic_merge_patch(original, patch, DEPLOY)
    if expected is None:  # the replace case
        assert result["spec"]["template"]["spec"]["tolerations"] == [{"effect": "NoSchedule", "key": "disktype"}]
    else:
        assert result == expected
    assert original != result or patch == {}, "the input is not mutated"


def test_finalizers_merge_and_delete_from_primitive_list() -> None:
    obj = {"metadata": {"finalizers": ["a", "b"]}}
    assert strategic_merge_patch(obj, {"metadata": {"finalizers": ["c"]}}, POD)["metadata"]["finalizers"] == \
        ["a", "b", "c"]
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}
    assert strategic_merge_patch(obj, patch, POD)["metadata"]["finalizers"] == ["b"]


def test_retain_keys() -> None:
    original = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert strategic_merge_patch(original, patch, DEPLOY) == {"spec": {"strategy": {"type": "Recreate"}}}


def test_merge_key_missing_is_an_error() -> None:
    with pytest.raises(PatchError, match="merge key"):
        strategic_merge_patch(deployment([{"name": "a"}]), deployment([{"image": "no-name"}]), DEPLOY)


def test_json_merge_patch_rfc7386() -> None:
    # RFC 7386 appendix A examples
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}


def test_json_patch_rfc6902() -> None:
    doc = {"foo": ["bar", "baz"], "x": {"y": 1}}
    out = json_patch(doc, [{"op": "add", "path": "/foo/1", "value": "qux"}, {"op": "remove", "path": "/x/y"},
                           {"op": "replace", "path": "/foo/0", "value": "BAR"},
                           {"op": "copy", "from": "/foo/0", "path": "/x/z"},
                           {"op": "test", "path": "/x/z", "value": "BAR"}])
    assert out == {"foo": ["BAR", "qux", "baz"], "x": {"z": "BAR"}}
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "test", "path": "/foo/0", "value": "nope"}])
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "remove", "path": "/missing"}])
