"""The indexed store: keys, replace, and indexes kept in step on every change."""

from __future__ import annotations

from kube.api import Node, Pod
from kube.cache import Store


def make_pod(name: str, *, namespace: str = "default", node: str = "", rv: str = "1") -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv},
                               "spec": {"nodeName": node or None, "containers": []}})


def by_node(p: Pod) -> list[str]:
    return [p.spec.node_name] if p.spec.node_name else []


def names(pods: list[Pod]) -> list[str]:
    return sorted(str(p.metadata.name) for p in pods)


def test_keys_are_namespace_slash_name_or_just_name_for_cluster_scoped_kinds() -> None:
    pods: Store[Pod] = Store()
    pods.upsert(make_pod("a", namespace="ns1"))
    assert pods.keys() == ["ns1/a"]
    assert pods.get_by_name("ns1", "a") is pods.get("ns1/a")
    nodes: Store[Node] = Store()
    nodes.upsert(Node.model_validate({"metadata": {"name": "n1"}}))
    assert nodes.keys() == ["n1"]
    assert nodes.get_by_name(None, "n1") is not None


def test_upsert_returns_the_previous_object_and_delete_removes_it() -> None:
    store: Store[Pod] = Store()
    first, second = make_pod("a", rv="1"), make_pod("a", rv="2")
    assert store.upsert(first) is None
    assert store.upsert(second) is first
    assert len(store) == 1
    assert store.delete("default/a") is second
    assert store.delete("default/a") is None
    assert len(store) == 0


def test_indexes_follow_upserts_and_deletes() -> None:
    store: Store[Pod] = Store({"node": by_node})
    store.upsert(make_pod("a", node="n1"))
    store.upsert(make_pod("b", node="n1"))
    store.upsert(make_pod("c"))
    assert names(store.by_index("node", "n1")) == ["a", "b"]
    store.upsert(make_pod("a", node="n2"))  # moved: out of n1, into n2
    assert names(store.by_index("node", "n1")) == ["b"]
    assert names(store.by_index("node", "n2")) == ["a"]
    store.delete("default/b")
    assert store.by_index("node", "n1") == []
    assert names(store.by_index("namespace", "default")) == ["a", "c"]  # built in


def test_replace_swaps_everything_and_returns_what_was_there() -> None:
    store: Store[Pod] = Store({"node": by_node})
    store.upsert(make_pod("a", node="n1"))
    store.upsert(make_pod("b", node="n1"))
    old = store.replace([make_pod("b", node="n2"), make_pod("c", node="n1")])
    assert sorted(old) == ["default/a", "default/b"]
    assert sorted(store.keys()) == ["default/b", "default/c"]
    assert names(store.by_index("node", "n1")) == ["c"]
    assert names(store.by_index("node", "n2")) == ["b"]


def test_indexes_added_later_cover_objects_already_stored() -> None:
    store: Store[Pod] = Store()
    store.upsert(make_pod("a", node="n1"))
    store.add_indexers({"node": by_node})
    assert names(store.by_index("node", "n1")) == ["a"]
    store.add_indexers({"node": lambda p: ["ignored"]})  # an existing name is kept, not replaced
    assert store.by_index("node", "ignored") == []
