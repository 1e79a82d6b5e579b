"""The EndpointSlice plan as a pure function: what a Service's slices must say about its pods,
and that a steady state plans no write at all."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from controllers.endpointslice import CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, SlicePlan, plan_slices
from kube.api import Node, Pod, Service
from tests.controllers.builders import make_pod, make_service

NODES = {"node-1": Node.model_validate({"metadata": {"name": "node-1",
                                                     "labels": {"topology.kubernetes.io/zone": "zone-a"}}}),
         "node-2": Node.model_validate({"metadata": {"name": "node-2"}})}
_names = itertools.count()


def plan(svc: Service, pods: list[Pod], existing: list[dict[str, Any]] | None = None, *,
         max_endpoints: int = 100) -> SlicePlan:
    return plan_slices(service=svc, pods=pods, existing=existing or [], node_for=NODES.get,
                       max_endpoints=max_endpoints)


def stored(plan_: SlicePlan, existing: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The slices as the API would hold them after `plan_` is carried out (names, uids, generations)."""
    by_name = {s["metadata"]["name"]: s for s in existing or []}
    for body in plan_.delete:
        by_name.pop(body["metadata"]["name"])
    for body in plan_.update:
        by_name[body["metadata"]["name"]] = copy.deepcopy(body)
    for body in plan_.create:
        n = next(_names)
        s = copy.deepcopy(body)
        s["metadata"]["name"] = f"{s['metadata'].pop('generateName')}{n:05d}"
        s["metadata"]["uid"] = f"uid-{n}"
        by_name[s["metadata"]["name"]] = s
    return list(by_name.values())


def ready_pod(name: str, ip: str, node: str = "node-1") -> Pod:
    return make_pod().name(name).node(node).ip(ip).ready(since="2024-01-01T00:00:00Z").obj()


def test_ready_pods_become_one_slice_with_labels_owner_and_conditions() -> None:
    svc = make_service().labels(team="a").port(80, target=8080, name="http").obj()
    result = plan(svc, [ready_pod("b", "10.0.0.2", "node-2"), ready_pod("a", "10.0.0.1")])
    assert not result.update and not result.delete and len(result.create) == 1
    body = result.create[0]
    assert body["metadata"]["generateName"] == "web-"
    assert body["metadata"]["labels"] == {"team": "a", LABEL_SERVICE_NAME: "web", LABEL_MANAGED_BY: CONTROLLER_NAME}
    assert body["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                                    "uid": svc.metadata.uid, "controller": True,
                                                    "blockOwnerDeletion": True}]
    assert body["addressType"] == "IPv4"
    assert body["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    first = body["endpoints"][0]
    assert first["addresses"] == ["10.0.0.1"] and first["nodeName"] == "node-1" and first["zone"] == "zone-a"
    assert first["conditions"] == {"ready": True, "serving": True, "terminating": False}
    assert first["targetRef"]["kind"] == "Pod" and first["targetRef"]["name"] == "a"
    assert "zone" not in body["endpoints"][1]


def test_steady_state_plans_nothing() -> None:
    svc = make_service().port(80).obj()
    pods = [ready_pod(f"p{i}", f"10.0.0.{i}") for i in range(5)]
    slices = stored(plan(svc, pods))
    again = plan(svc, pods, slices)
    assert again.empty(), again


def test_not_ready_and_terminating_conditions() -> None:
    svc = make_service().port(80).obj()
    not_ready = make_pod().name("starting").ip("10.0.0.1").obj()
    leaving = make_pod().name("leaving").ip("10.0.0.2").ready(since="2024-01-01T00:00:00Z").terminating().obj()
    no_ip = make_pod().name("pending").obj()
    done = make_pod().name("done").ip("10.0.0.3").phase("Succeeded").obj()
    conditions = {e["targetRef"]["name"]: e["conditions"]
                  for e in plan(svc, [not_ready, leaving, no_ip, done]).create[0]["endpoints"]}
    assert conditions == {"starting": {"ready": False, "serving": False, "terminating": False},
                          "leaving": {"ready": False, "serving": True, "terminating": True}}
    published = plan(make_service().port(80).publish_not_ready().obj(), [not_ready, leaving]).create[0]
    assert all(e["conditions"]["ready"] for e in published["endpoints"])


def test_named_target_port_resolves_per_pod_and_groups_slices() -> None:
    svc = make_service().port(80, target="http", name="web").obj()
    on_8080 = make_pod().name("a").ip("10.0.0.1").container_port(8080, name="http").obj()
    on_9090 = make_pod().name("b").ip("10.0.0.2").container_port(9090, name="http").obj()
    without = make_pod().name("c").ip("10.0.0.3").container_port(7070, name="metrics").obj()
    by_ports = {str([p["port"] for p in s["ports"]]): [e["targetRef"]["name"] for e in s["endpoints"]]
                for s in plan(svc, [on_8080, on_9090, without]).create}
    assert by_ports == {"[8080]": ["a"], "[9090]": ["b"], "[]": ["c"]}


def test_scale_down_updates_and_empty_service_keeps_a_placeholder() -> None:
    svc = make_service().port(80).obj()
    pods = [ready_pod(f"p{i}", f"10.0.0.{i}") for i in range(3)]
    slices = stored(plan(svc, pods))
    fewer = plan(svc, pods[:1], slices)
    assert not fewer.create and not fewer.delete and len(fewer.update) == 1
    assert [e["targetRef"]["name"] for e in fewer.update[0]["endpoints"]] == ["p0"]
    slices = stored(fewer, slices)
    none = plan(svc, [], slices)
    # The last endpoint going turns the slice into the placeholder: one update, no delete+create.
    assert not none.create and not none.delete and len(none.update) == 1
    assert none.update[0]["endpoints"] == [] and none.update[0]["ports"] == []
    slices = stored(none, slices)
    assert plan(svc, [], slices).empty()


def test_placeholder_for_a_service_without_pods_and_headless_label() -> None:
    result = plan(make_service().headless().obj(), [])
    assert len(result.create) == 1
    body = result.create[0]
    assert body["endpoints"] == [] and body["ports"] == []
    assert body["metadata"]["labels"]["service.kubernetes.io/headless"] == ""


def test_max_endpoints_per_slice_and_least_churn_fill() -> None:
    svc = make_service().port(80).obj()
    pods = [ready_pod(f"p{i:02d}", f"10.0.0.{i}") for i in range(5)]
    first = plan(svc, pods, max_endpoints=2)
    assert sorted(len(s["endpoints"]) for s in first.create) == [1, 2, 2]
    slices = stored(first)
    # One more pod goes into the slice with room, leaving the full ones untouched.
    more = plan(svc, [*pods, ready_pod("p99", "10.0.0.99")], slices, max_endpoints=2)
    assert not more.create and not more.delete and len(more.update) == 1
    assert len(more.update[0]["endpoints"]) == 2


def test_slices_of_an_older_service_with_the_same_name_are_replaced() -> None:
    old = make_service().port(80).obj()
    slices = stored(plan(old, [ready_pod("a", "10.0.0.1")]))
    new = make_service().port(80).obj()
    result = plan(new, [ready_pod("a", "10.0.0.1")], slices)
    assert [s["metadata"]["name"] for s in result.delete] == [slices[0]["metadata"]["name"]]
    assert len(result.create) == 1 and result.create[0]["metadata"]["ownerReferences"][0]["uid"] == new.metadata.uid


def test_pod_on_a_missing_node_is_left_out_and_reported() -> None:
    svc = make_service().port(80).obj()
    result = plan(svc, [ready_pod("a", "10.0.0.1", node="gone"), ready_pod("b", "10.0.0.2")])
    assert [e["targetRef"]["name"] for e in result.create[0]["endpoints"]] == ["b"]
    assert result.errors == ["skipping Pod a for Service default/web: Node gone Not Found"]


def test_service_label_change_updates_slice_labels() -> None:
    svc = make_service().port(80).obj()
    slices = stored(plan(svc, [ready_pod("a", "10.0.0.1")]))
    relabelled = make_service().port(80).labels(tier="web").obj()
    relabelled.metadata.uid = svc.metadata.uid
    result = plan(relabelled, [ready_pod("a", "10.0.0.1")], slices)
    assert len(result.update) == 1 and result.update[0]["metadata"]["labels"]["tier"] == "web"
