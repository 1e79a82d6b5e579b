"""The scheduler cache: assumed pods count at once, are confirmed by the watch or forgotten."""

from __future__ import annotations

import pytest

from kube.api import Pod
from scheduler.cache import SchedulerCache
from scheduler.framework import FitError, Framework, Profile, Resource
from scheduler.plugins import DEFAULT_PLUGINS, DEFAULT_SCORE_WEIGHTS, IN_TREE_REGISTRY
from scheduler.schedule_one import SchedulingAlgorithm
from tests.scheduler.builders import make_node, make_pod


def bound(pod: Pod, node: str) -> Pod:
    return pod.model_copy(update={"spec": pod.spec.model_copy(update={"node_name": node})})


def requested(cache: SchedulerCache, node: str) -> tuple[Resource, int]:
    info = cache.node_info(node)
    assert info is not None
    return info.requested, info.pod_count


@pytest.fixture
def cache() -> SchedulerCache:
    c = SchedulerCache()
    c.add_node(make_node().name("n1").capacity(cpu="1", memory="1Gi", pods=10).obj())
    c.add_node(make_node().name("n2").capacity(cpu="1", memory="1Gi", pods=10).obj())
    return c


def test_assumed_pod_counts_at_once(cache: SchedulerCache) -> None:
    pod = make_pod().name("p").req(cpu="300m").obj()
    cache.assume_pod(pod, "n1")
    assert cache.is_assumed(pod.key)
    assert requested(cache, "n1") == (Resource(300), 1)
    assert requested(cache, "n2") == (Resource(), 0)
    with pytest.raises(ValueError):
        cache.assume_pod(pod, "n2")


def test_forget_undoes_the_assumption(cache: SchedulerCache) -> None:
    pod = make_pod().name("p").req(cpu="300m").obj()
    cache.assume_pod(pod, "n1")
    cache.forget_pod(pod.key)
    assert not cache.is_assumed(pod.key)
    assert requested(cache, "n1") == (Resource(), 0)
    cache.assume_pod(pod, "n2")  # may be assumed again after a failed binding
    assert requested(cache, "n2") == (Resource(300), 1)


@pytest.mark.parametrize("finish_binding_first", [True, False])
def test_watch_confirms_the_assumption(cache: SchedulerCache, finish_binding_first: bool) -> None:
    pod = make_pod().name("p").req(cpu="300m").obj()
    cache.assume_pod(pod, "n1")
    if finish_binding_first:
        cache.finish_binding(pod.key)
    cache.add_pod(bound(pod, "n1"))
    assert not cache.is_assumed(pod.key)
    assert requested(cache, "n1") == (Resource(300), 1)  # counted once, not twice
    cache.finish_binding(pod.key)  # a late binding result changes nothing
    cache.forget_pod(pod.key)  # nor does a late forget: the API says it is bound
    assert requested(cache, "n1") == (Resource(300), 1)


def test_watch_wins_over_a_different_assumption(cache: SchedulerCache) -> None:
    pod = make_pod().name("p").req(cpu="300m").obj()
    cache.assume_pod(pod, "n1")
    cache.add_pod(bound(pod, "n2"))
    assert requested(cache, "n1") == (Resource(), 0)
    assert requested(cache, "n2") == (Resource(300), 1)


def test_unbound_updates_keep_the_assumption(cache: SchedulerCache) -> None:
    pod = make_pod().name("p").req(cpu="300m").obj()
    cache.assume_pod(pod, "n1")
    cache.update_pod(pod)  # e.g. a status write seen before the binding
    assert cache.is_assumed(pod.key)
    assert requested(cache, "n1") == (Resource(300), 1)


def test_deleted_pods_are_removed_whatever_their_state(cache: SchedulerCache) -> None:
    assumed = make_pod().name("a").req(cpu="300m").obj()
    confirmed = make_pod().name("c").req(cpu="200m").obj()
    cache.assume_pod(assumed, "n1")
    cache.add_pod(bound(confirmed, "n1"))
    assert cache.remove_pod(assumed.key) and cache.remove_pod(confirmed.key)
    assert not cache.remove_pod(confirmed.key)
    assert requested(cache, "n1") == (Resource(), 0)


def test_terminal_pods_free_their_resources(cache: SchedulerCache) -> None:
    pod = bound(make_pod().name("p").req(cpu="300m").obj(), "n1")
    cache.add_pod(pod)
    assert requested(cache, "n1") == (Resource(300), 1)
    finished = pod.model_copy(update={"status": pod.status.model_copy(update={"phase": "Succeeded"})})
    cache.update_pod(finished)
    assert requested(cache, "n1") == (Resource(), 0)
    cache.add_pod(finished)  # a relist of a finished pod does not count it either
    assert requested(cache, "n1") == (Resource(), 0)


def test_pods_may_arrive_before_their_node() -> None:
    cache = SchedulerCache()
    cache.add_pod(bound(make_pod().name("p").req(cpu="300m").obj(), "late"))
    assert cache.node_infos() == []
    cache.add_node(make_node().name("late").obj())
    assert requested(cache, "late") == (Resource(300), 1)
    cache.remove_node("late")
    assert cache.node_infos() == []
    cache.add_node(make_node().name("late").obj())  # the node's pods were still counted
    assert requested(cache, "late") == (Resource(300), 1)


def test_node_updates_keep_the_pods(cache: SchedulerCache) -> None:
    cache.add_pod(bound(make_pod().name("p").req(cpu="300m").obj(), "n1"))
    cache.update_node(make_node().name("n1").capacity(cpu="2", memory="1Gi").obj())
    info = cache.node_info("n1")
    assert info is not None and info.allocatable.milli_cpu == 2000 and info.pod_count == 1


def test_a_burst_never_over_commits(cache: SchedulerCache) -> None:
    """Twenty pods decided back to back, none bound yet: exactly what fits is placed."""
    algorithm = SchedulingAlgorithm(Framework(Profile(plugins=DEFAULT_PLUGINS, score_weights=DEFAULT_SCORE_WEIGHTS),
                                              IN_TREE_REGISTRY))
    placed: dict[str, int] = {"n1": 0, "n2": 0}
    unschedulable = 0
    for i in range(20):
        pod = make_pod().name(f"p{i}").req(cpu="300m", memory="100Mi").obj()
        try:
            host = algorithm.schedule(pod, cache.node_infos()).suggested_host
        except FitError as e:
            assert str(e) == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                                  "2 No preemption victims found for incoming pod..")
            unschedulable += 1
            continue
        cache.assume_pod(bound(pod, host), host)
        placed[host] += 1
    assert placed == {"n1": 3, "n2": 3}
    assert unschedulable == 14
    for node in ("n1", "n2"):
        used, _ = requested(cache, node)
        assert used.milli_cpu <= 1000
