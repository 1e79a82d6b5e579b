"""The controller-manager as a real process against a real API server (no scheduler, no kubelet:
pods stay Pending): Deployment -> one ReplicaSet -> Pods, scaling, rollouts, adoption, and
SIGKILL restarts that never leave more pods than asked for."""

from __future__ import annotations

import asyncio
import functools
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from controllers.deployment.util import POD_TEMPLATE_HASH_LABEL, compute_hash
from kube.api import Deployment, KubeObject, Namespace, Node, Pod, ReplicaSet
from kube.client import RESTClient
from kube.errors import Forbidden, NotFound
from kube.podutil import is_pod_ready
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


def controller_manager(api: ApiServerHarness, log_path: Path, *args: str) -> Process:
    """`python -m controllers` with the controller-manager identity (not started); its log is shown on failure."""
    return api.controller_manager("--log-level", "DEBUG", *args, log_path=log_path)


@pytest.fixture
def manager(api: ApiServerHarness, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Process]:
    proc = controller_manager(api, tmp_path / "controller-manager.log").start()
    try:
        yield proc
    finally:
        code = proc.stop()
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            sys.stderr.write(f"--- controller-manager log ---\n{proc.log()[-30000:]}\n")
        assert code in (0, None, -signal.SIGKILL), f"controller-manager exited with {code}"


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


class Cluster:
    """An admin client and a fresh namespace for one test."""

    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"cm-{uuid.uuid4().hex[:6]}"

    async def create_deployment(self, name: str, *, replicas: int, image: str = "nginx:1.25",
                                **spec: Any) -> Deployment:
        return await self.client.create(Deployment.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}, **spec}}))

    async def set_image(self, name: str, image: str) -> Deployment:
        return await self.patch_deployment(name, {"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": image}]}}}})

    async def patch_deployment(self, name: str, patch: dict[str, Any]) -> Deployment:
        return await self.client.patch(Deployment, name, patch, self.namespace)

    async def scale(self, name: str, replicas: int) -> Deployment:
        return await self.patch_deployment(name, {"spec": {"replicas": replicas}})

    async def replicasets(self) -> list[ReplicaSet]:
        return (await self.client.list(ReplicaSet, self.namespace)).items

    async def pods(self) -> list[Pod]:
        return (await self.client.list(Pod, self.namespace)).items

    async def active_pods(self) -> list[Pod]:
        return [p for p in await self.pods() if p.metadata.deletion_timestamp is None
                and p.status.phase not in ("Succeeded", "Failed")]

    async def at_least(self, count: int) -> bool:
        return len(await self.active_pods()) >= count

    async def exactly(self, count: int, *, owner_uid: str | None = None) -> list[Pod] | None:
        """The active pods once there are exactly `count` (owned by `owner_uid`, if given)."""
        pods = await self.active_pods()
        if owner_uid is not None:
            pods = [p for p in pods if (ref := p.metadata.controller_ref()) is not None and ref.uid == owner_uid]
        return pods if len(pods) == count else None

    async def settled(self, name: str, replicas: int, *,
                      ready: bool = False) -> tuple[Deployment, ReplicaSet, list[Pod]] | None:
        """Deployment, its only ReplicaSet and its pods, once status and pods show `replicas`.

        With `ready`, every pod not yet Ready is reported Ready first (the kubelet's part), so
        a rolling update, which waits for new pods to be available, can go on.
        """
        if ready:
            await self.mark_ready([p for p in await self.active_pods() if not is_pod_ready(p)])
        d = await self.client.get(Deployment, name, self.namespace)
        owned = [rs for rs in await self.replicasets()
                 if (ref := rs.metadata.controller_ref()) is not None and ref.uid == d.metadata.uid]
        live = [rs for rs in owned if rs.spec.replicas]
        if len(live) != 1 or live[0].spec.replicas != replicas:
            return None
        rs = live[0]
        pods = await self.exactly(replicas, owner_uid=rs.metadata.uid)
        if pods is None or rs.status.replicas != replicas or rs.status.observed_generation != rs.metadata.generation:
            return None
        if d.status.observed_generation != d.metadata.generation or d.status.updated_replicas != replicas:
            return None
        return d, rs, pods

    async def mark_ready(self, pods: list[Pod]) -> None:
        """Play the kubelet: report the pods Running and Ready."""
        for pod in pods:
            await self.client.patch(Pod, pod.metadata.name or "", {"status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
                self.namespace, subresource="status")

    async def cleanup(self) -> None:
        for kind in (Deployment, ReplicaSet, Pod):
            for obj in (await self.client.list(kind, self.namespace)).items:
                try:
                    await self.client.delete(kind, obj.metadata.name or "", self.namespace, grace_period_seconds=0)
                except NotFound:
                    pass


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        try:
            yield c
        finally:
            await c.cleanup()


class MaxActivePods:
    """Watches the namespace's pods and records the most active pods seen at any moment."""

    def __init__(self, client: RESTClient, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.active: set[str] = set()
        self.max_seen = 0

    async def run(self) -> None:
        rv = "0"
        while True:  # resume where a watch the server ended left off
            async for ev in self.client.watch(Pod, self.namespace, resource_version=rv):
                rv = ev.resource_version or rv
                pod = ev.object
                if pod is None:
                    continue
                key = pod.metadata.name or ""
                if ev.type == "DELETED" or pod.metadata.deletion_timestamp is not None:
                    self.active.discard(key)
                else:
                    self.active.add(key)
                self.max_seen = max(self.max_seen, len(self.active))


async def test_deployment_gives_one_replicaset_and_owned_pods(cluster: Cluster,
                                                              manager: Process) -> None:
    created = await cluster.create_deployment("web", replicas=3)
    d, rs, pods = await eventually(lambda: cluster.settled("web", 3), timeout=30, message="3 pods via one RS")

    pod_hash = compute_hash(created.spec.template, None)
    assert rs.metadata.name == f"web-{pod_hash}"
    assert len(await cluster.replicasets()) == 1
    ref = rs.metadata.controller_ref()
    assert ref is not None and (ref.api_version, ref.kind, ref.name, ref.uid, ref.block_owner_deletion) == \
        ("apps/v1", "Deployment", "web", d.metadata.uid, True)
    assert rs.metadata.labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: pod_hash}
    assert rs.spec.selector.match_labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: pod_hash}
    assert rs.spec.template.metadata.labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: pod_hash}
    annotations = rs.metadata.annotations or {}
    assert annotations["deployment.kubernetes.io/revision"] == "1"
    assert annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    assert annotations["deployment.kubernetes.io/max-replicas"] == "4"  # maxSurge 25% of 3, rounded up
    assert (d.metadata.annotations or {})["deployment.kubernetes.io/revision"] == "1"

    for pod in pods:
        pref = pod.metadata.controller_ref()
        assert pref is not None and (pref.api_version, pref.kind, pref.name, pref.uid, pref.block_owner_deletion) == \
            ("apps/v1", "ReplicaSet", rs.metadata.name, rs.metadata.uid, True)
        assert (pod.metadata.name or "").startswith(f"web-{pod_hash}-")
        assert pod.metadata.labels == {"app": "web", POD_TEMPLATE_HASH_LABEL: pod_hash}
        assert pod.spec.containers[0].image == "nginx:1.25"

    assert (d.status.replicas, d.status.updated_replicas, d.status.available_replicas,
            d.status.unavailable_replicas) == (3, 3, 0, 3)
    assert (rs.status.replicas, rs.status.fully_labeled_replicas, rs.status.ready_replicas) == (3, 3, 0)


async def test_scaling_up_and_down(cluster: Cluster, manager: Process) -> None:
    await cluster.create_deployment("web", replicas=3)
    await eventually(lambda: cluster.settled("web", 3), timeout=30)
    await cluster.scale("web", 5)
    _, rs, _ = await eventually(lambda: cluster.settled("web", 5), timeout=30, message="scaled to 5")
    assert (rs.metadata.annotations or {})["deployment.kubernetes.io/desired-replicas"] == "5"
    await cluster.scale("web", 2)
    await eventually(lambda: cluster.settled("web", 2), timeout=30, message="scaled to 2")
    assert len(await cluster.pods()) == 2  # the extra pods are gone, not just terminating
    assert len(await cluster.replicasets()) == 1


async def test_template_change_rolls_to_a_new_replicaset(cluster: Cluster, manager: Process) -> None:
    await cluster.create_deployment("web", replicas=3)
    _, first, _ = await eventually(lambda: cluster.settled("web", 3, ready=True), timeout=30)
    await cluster.set_image("web", "nginx:1.26")

    d, second, pods = await eventually(lambda: cluster.settled("web", 3, ready=True), timeout=30, message="rolled over")
    assert second.metadata.name != first.metadata.name
    assert second.metadata.name == f"web-{compute_hash(d.spec.template, None)}"
    assert all(p.spec.containers[0].image == "nginx:1.26" for p in pods)
    assert (second.metadata.annotations or {})["deployment.kubernetes.io/revision"] == "2"
    assert (d.metadata.annotations or {})["deployment.kubernetes.io/revision"] == "2"
    old = await cluster.client.get(ReplicaSet, first.metadata.name or "", cluster.namespace)
    assert old.spec.replicas == 0
    assert len(await cluster.replicasets()) == 2

    # Back to the first template: the old ReplicaSet is reused (no third one) with revision 3.
    await cluster.set_image("web", "nginx:1.25")
    _, third, _ = await eventually(lambda: cluster.settled("web", 3, ready=True), timeout=30, message="rolled back")
    assert third.metadata.uid == first.metadata.uid
    assert (third.metadata.annotations or {})["deployment.kubernetes.io/revision"] == "3"
    assert len(await cluster.replicasets()) == 2


async def test_old_replicasets_beyond_the_history_limit_are_deleted(cluster: Cluster,
                                                                   manager: Process) -> None:
    await cluster.create_deployment("web", replicas=1, revisionHistoryLimit=1)
    await eventually(lambda: cluster.settled("web", 1, ready=True), timeout=30)
    await cluster.set_image("web", "nginx:1.26")
    _, second, _ = await eventually(lambda: cluster.settled("web", 1, ready=True), timeout=30)
    await cluster.set_image("web", "nginx:1.27")
    _, third, _ = await eventually(lambda: cluster.settled("web", 1, ready=True), timeout=30)

    async def history() -> set[str] | None:
        names = {rs.metadata.name or "" for rs in await cluster.replicasets()}
        return names if len(names) == 2 else None

    assert await eventually(history, timeout=30, message="oldest ReplicaSet deleted") == \
        {second.metadata.name, third.metadata.name}


async def test_hash_collision_bumps_collision_count(cluster: Cluster, manager: Process) -> None:
    # The name the Deployment's ReplicaSet would get, from the template as the server defaults it.
    planned = await cluster.client.create(Deployment.model_validate({
        "metadata": {"name": "web", "namespace": cluster.namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}), dry_run=True)
    squatter_name = f"web-{compute_hash(planned.spec.template, None)}"
    # A foreign ReplicaSet already holds that name.
    squatter = await cluster.client.create(ReplicaSet.model_validate({
        "metadata": {"name": squatter_name, "namespace": cluster.namespace, "labels": {"app": "other"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "other"}},
                 "template": {"metadata": {"labels": {"app": "other"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}}))
    created = await cluster.create_deployment("web", replicas=2)
    assert compute_hash(created.spec.template, None) == squatter_name.removeprefix("web-")

    d, rs, _ = await eventually(lambda: cluster.settled("web", 2), timeout=30, message="rolled out past the collision")
    assert d.status.collision_count == 1
    assert rs.metadata.name == f"web-{compute_hash(created.spec.template, 1)}"
    untouched = await cluster.client.get(ReplicaSet, squatter_name, cluster.namespace)
    assert untouched.metadata.owner_references is None  # never adopted: the Deployment does not select it
    assert untouched.spec.to_dict() == squatter.spec.to_dict()


async def test_rollout_completes_when_pods_become_ready(cluster: Cluster, manager: Process) -> None:
    await cluster.create_deployment("web", replicas=2)
    _, _, pods = await eventually(lambda: cluster.settled("web", 2), timeout=30)
    await cluster.mark_ready(pods)

    async def complete() -> Deployment | None:
        d = await cluster.client.get(Deployment, "web", cluster.namespace)
        s = d.status
        done = (s.observed_generation or 0) >= (d.metadata.generation or 0) and s.updated_replicas == 2 \
            and s.replicas == 2 and s.available_replicas == 2
        return d if done else None

    d = await eventually(complete, timeout=30, message="kubectl rollout status would finish")
    conditions = {c.type: c for c in d.status.conditions or []}
    assert (conditions["Available"].status, conditions["Available"].reason) == ("True", "MinimumReplicasAvailable")
    assert (conditions["Progressing"].status, conditions["Progressing"].reason) == ("True", "NewReplicaSetAvailable")
    assert d.status.unavailable_replicas == 0 and d.status.ready_replicas == 2


async def test_paused_deployment_is_not_rolled_out(cluster: Cluster, manager: Process) -> None:
    await cluster.create_deployment("web", replicas=2)
    _, rs, _ = await eventually(lambda: cluster.settled("web", 2, ready=True), timeout=30)
    await cluster.patch_deployment("web", {"spec": {"paused": True}})
    await cluster.set_image("web", "nginx:1.26")

    async def paused_observed() -> Deployment | None:
        d = await cluster.client.get(Deployment, "web", cluster.namespace)
        cond = next((c for c in d.status.conditions or [] if c.type == "Progressing"), None)
        ok = d.status.observed_generation == d.metadata.generation and cond is not None \
            and cond.reason == "DeploymentPaused"
        return d if ok else None

    await eventually(paused_observed, timeout=30, message="pause observed")
    assert [r.metadata.uid for r in await cluster.replicasets()] == [rs.metadata.uid]
    await cluster.patch_deployment("web", {"spec": {"paused": False}})
    _, new, pods = await eventually(lambda: cluster.settled("web", 2, ready=True), timeout=30,
                                    message="resumed rollout")
    assert new.metadata.uid != rs.metadata.uid and all(p.spec.containers[0].image == "nginx:1.26" for p in pods)


async def test_replicaset_adopts_orphans_and_replaces_deleted_pods(cluster: Cluster,
                                                                   manager: Process) -> None:
    labels = {"app": "solo"}
    orphan = await cluster.client.create(Pod.model_validate({
        "metadata": {"name": "orphan", "namespace": cluster.namespace, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}))
    rs = await cluster.client.create(ReplicaSet.model_validate({
        "metadata": {"name": "solo", "namespace": cluster.namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}}))

    pods = await eventually(lambda: cluster.exactly(2, owner_uid=rs.metadata.uid), timeout=30, message="adopted")
    assert orphan.metadata.uid in {p.metadata.uid for p in pods}
    assert len(await cluster.pods()) == 2

    await cluster.client.delete(Pod, "orphan", cluster.namespace)
    pods = await eventually(lambda: cluster.exactly(2, owner_uid=rs.metadata.uid), timeout=30, message="replaced")
    assert orphan.metadata.uid not in {p.metadata.uid for p in pods}

    # A pod relabelled out of the selector is released (ownerReference removed) and replaced.
    leaving = pods[0].metadata.name or ""
    await cluster.client.patch(Pod, leaving, {"metadata": {"labels": {"app": "elsewhere"}}}, cluster.namespace)

    async def released() -> bool:
        pod = await cluster.client.get(Pod, leaving, cluster.namespace)
        return pod.metadata.owner_references is None
    await eventually(released, timeout=30, message="relabelled pod released")
    pods = await eventually(lambda: cluster.exactly(2, owner_uid=rs.metadata.uid), timeout=30, message="refilled")
    assert leaving not in {p.metadata.name for p in pods}

    async def status_counts() -> bool:
        got = await cluster.client.get(ReplicaSet, "solo", cluster.namespace)
        return got.status.replicas == 2 and got.status.observed_generation == got.metadata.generation
    await eventually(status_counts, timeout=30)


async def test_sigkill_while_creating_pods_never_overshoots(cluster: Cluster,
                                                            manager: Process) -> None:
    watcher = MaxActivePods(cluster.client, cluster.namespace)
    async with asyncio.TaskGroup() as tg:
        watch = tg.create_task(watcher.run())
        try:
            await cluster.create_deployment("web", replicas=12)
            for at_least in (1, 4, 8):  # kill in the middle of the slow-start batches, three times
                await eventually(functools.partial(cluster.at_least, at_least), timeout=30, interval=0.01,
                                 message=f"{at_least} pods being created")
                manager.kill()
                manager.start()
            await eventually(lambda: cluster.settled("web", 12), timeout=60, message="converged to 12")
            assert watcher.max_seen <= 12, f"saw {watcher.max_seen} active pods for 12 replicas"

            manager.kill()
            await cluster.scale("web", 15)
            manager.start()
            await eventually(lambda: cluster.settled("web", 15), timeout=60, message="converged to 15")
            assert len(await cluster.replicasets()) == 1
            assert len(await cluster.active_pods()) == 15
            assert watcher.max_seen <= 15, f"saw {watcher.max_seen} active pods for 15 replicas"
        finally:
            watch.cancel()


async def test_every_namespace_gets_a_default_service_account(cluster: Cluster,
                                                              manager: Process) -> None:
    from kube.api import ServiceAccount

    async def default_sa() -> ServiceAccount | None:
        try:
            return await cluster.client.get(ServiceAccount, "default", cluster.namespace)
        except NotFound:
            return None

    first = await eventually(default_sa, timeout=30, message="default ServiceAccount created")
    await cluster.client.delete(ServiceAccount, "default", cluster.namespace)

    async def recreated() -> ServiceAccount | None:
        sa = await default_sa()
        return sa if sa is not None and sa.metadata.uid != first.metadata.uid else None

    await eventually(recreated, timeout=30, message="default ServiceAccount recreated")


async def test_deleted_namespace_empties_then_goes(api: ApiServerHarness, manager: Process) -> None:
    from kube.api import ConfigMap

    name = f"gone-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as client:
        await client.create(Namespace.model_validate({"metadata": {"name": name}}))
        for i in range(3):
            await client.create(ConfigMap.model_validate({"metadata": {"name": f"cm{i}", "namespace": name}}))
        await client.create(Pod.model_validate({"metadata": {"name": "p", "namespace": name},
                                                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
        await client.delete(Namespace, name)
        marked = await client.get(Namespace, name)
        assert marked.metadata.deletion_timestamp and marked.status and marked.status.phase == "Terminating"
        refused = await client.request("GET", f"/api/v1/namespaces/{name}")  # still readable while terminating
        assert refused["status"]["phase"] == "Terminating"
        with pytest.raises(Forbidden):
            await client.create(ConfigMap.model_validate({"metadata": {"name": "late", "namespace": name}}))

        async def gone() -> bool:
            try:
                await client.get(Namespace, name)
            except NotFound:
                return True
            return False

        await eventually(gone, timeout=30, message="namespace removed after its content")
        assert not (await client.list(ConfigMap, name)).items


async def test_garbage_collector_background_orphan_and_foreground(cluster: Cluster,
                                                                  manager: Process) -> None:
    client, ns = cluster.client, cluster.namespace

    async def pods_of(app: str) -> list[Pod]:
        return (await client.list(Pod, ns, label_selector=f"app={app}")).items

    async def gone(cls: type[KubeObject], name: str) -> bool:
        try:
            await client.get(cls, name, ns)
        except NotFound:
            return True
        return False

    # Background (kubectl's default): the Deployment goes at once, its ReplicaSet and pods follow.
    await cluster.create_deployment("bg", replicas=2)
    await eventually(lambda: cluster.settled("bg", 2), timeout=30, message="bg settled")
    await client.delete(Deployment, "bg", ns)
    await eventually(lambda: _all_gone(client, ns, "bg"), timeout=30, message="ReplicaSet and pods collected")

    # Orphan: the ReplicaSet and pods stay, without an owner reference to the Deployment.
    await cluster.create_deployment("keep", replicas=1)
    _, rs, _ = await eventually(lambda: cluster.settled("keep", 1), timeout=30, message="keep settled")
    await client.delete(Deployment, "keep", ns, propagation_policy="Orphan")
    await eventually(lambda: gone(Deployment, "keep"), timeout=30, message="orphaning Deployment removed")
    kept = await client.get(ReplicaSet, rs.metadata.name or "", ns)
    assert not kept.metadata.owner_references

    # Foreground: the Deployment stays (with deletionTimestamp) until its dependents are gone.
    await cluster.create_deployment("fg", replicas=1)
    await eventually(lambda: cluster.settled("fg", 1), timeout=30, message="fg settled")
    await client.delete(Deployment, "fg", ns, propagation_policy="Foreground")
    await eventually(lambda: gone(Deployment, "fg"), timeout=30, message="foreground Deployment removed")
    assert await _all_gone(client, ns, "fg")


async def _all_gone(client: RESTClient, ns: str, app: str) -> bool:
    rs = [r for r in (await client.list(ReplicaSet, ns)).items if (r.metadata.name or "").startswith(f"{app}-")]
    pods = [p for p in (await client.list(Pod, ns, label_selector=f"app={app}")).items]
    return not rs and not pods


async def test_silent_node_goes_unknown_tainted_and_loses_intolerant_pods(api: ApiServerHarness,
                                                                        tmp_path: Path) -> None:
    from kube.api import Lease

    proc = controller_manager(api, tmp_path / "cm.log", "--node-monitor-grace-period", "2",
                              "--node-monitor-period", "0.5").start()
    node = f"silent-{uuid.uuid4().hex[:6]}"
    ns = f"nl-{uuid.uuid4().hex[:6]}"
    try:
        async with api.client("admin") as client:
            await client.create(Namespace.model_validate({"metadata": {"name": ns}}))
            await client.create(Node.model_validate({"metadata": {"name": node}}))
            await client.patch(Node, node, {"status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}, subresource="status")
            await client.create(Lease.model_validate({"metadata": {"name": node, "namespace": "kube-node-lease"},
                                                      "spec": {"holderIdentity": node, "leaseDurationSeconds": 40,
                                                               "renewTime": "2026-01-01T00:00:00.000000Z"}}))
            base = {"spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}}
            # Admission gives every pod 300 s; this one asks for 1 s, the other tolerates forever.
            brief = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 1}
            await client.create(Pod.model_validate({**base, "metadata": {"name": "intolerant", "namespace": ns},
                                                    "spec": {**base["spec"], "tolerations": [brief]}}))
            tolerant = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
            await client.create(Pod.model_validate({**base, "metadata": {"name": "tolerant", "namespace": ns},
                                                    "spec": {**base["spec"], "tolerations": [tolerant]}}))
            # Equal to a value the (valueless) taint does not have: no match, so evicted at once.
            mismatched = {"key": "node.kubernetes.io/unreachable", "operator": "Equal", "value": "other",
                          "effect": "NoExecute"}
            await client.create(Pod.model_validate({**base, "metadata": {"name": "mismatched", "namespace": ns},
                                                    "spec": {**base["spec"], "tolerations": [mismatched]}}))

            async def unknown_and_tainted() -> Node | None:
                n = await client.get(Node, node)
                ready = n.status.condition("Ready")
                tainted = any(t.key == "node.kubernetes.io/unreachable" and t.effect == "NoExecute"
                              for t in n.spec.taints or [])
                return n if ready and ready.status == "Unknown" and tainted else None

            n = await eventually(unknown_and_tainted, timeout=30, message="node Unknown and tainted unreachable")
            assert n.status.condition("Ready").reason == "NodeStatusUnknown"  # type: ignore[union-attr]

            async def evicted() -> bool:
                pods = [await client.get(Pod, name, ns) for name in ("intolerant", "mismatched")]
                return all(p.metadata.deletion_timestamp is not None for p in pods)

            await eventually(evicted, timeout=30, message="intolerant and mismatched pods evicted")
            kept = await client.get(Pod, "tolerant", ns)
            assert kept.metadata.deletion_timestamp is None
            assert kept.status.condition("Ready") and kept.status.condition("Ready").status == "False"  # type: ignore[union-attr]
            await client.delete(Node, node)
    finally:
        proc.stop()


async def test_leader_election_one_acts_and_the_standby_takes_over(api: ApiServerHarness, tmp_path: Path) -> None:
    from kube.api import Lease

    flags = ["--leader-elect", "--leader-elect-lease-duration", "3", "--leader-elect-renew-deadline", "2",
             "--leader-elect-retry-period", "0.5"]
    procs = [controller_manager(api, tmp_path / f"cm{i}.log", *flags).start() for i in range(2)]
    try:
        async with api.client("admin") as client:
            async def holder() -> str | None:
                try:
                    lease = await client.get(Lease, "kube-controller-manager", "kube-system")
                except NotFound:
                    return None
                return lease.spec.holder_identity or None

            first = await eventually(holder, timeout=30, message="a leader holds the lease")
            logs = [p.log() for p in procs]
            await eventually(lambda: _async_value(sum("Became leader" in p.log() for p in procs) == 1),
                             timeout=10, message="exactly one became leader")
            leader = next(p for p in procs if "Became leader" in p.log())
            standby = next(p for p in procs if p is not leader)
            assert "Became leader" not in standby.log(), logs
            leader.kill()

            async def taken_over() -> str | None:
                h = await holder()
                return h if h and h != first else None

            await eventually(taken_over, timeout=30, message="the standby took the lease over")
            # The log line follows the lease write; the two are not one step.
            await eventually(lambda: _async_value("Became leader" in standby.log()), timeout=10,
                             message="the standby says it became leader")
    finally:
        for p in procs:
            p.stop()


async def _async_value(value: bool) -> bool:
    return value


async def test_controllers_record_events(cluster: Cluster, manager: Process) -> None:
    from kube.api import Event

    await cluster.create_deployment("ev", replicas=2)
    await eventually(lambda: cluster.settled("ev", 2), timeout=30, message="ev settled")

    async def reasons() -> set[str] | None:
        events = (await cluster.client.list(Event, cluster.namespace)).items
        got = {str(getattr(e, "reason", None) or e.to_dict().get("reason")) for e in events}
        return got if {"ScalingReplicaSet", "SuccessfulCreate"} <= got else None

    await eventually(reasons, timeout=30, message="ScalingReplicaSet and SuccessfulCreate events")
    events = (await cluster.client.list(Event, cluster.namespace)).items
    scaling = next(e.to_dict() for e in events if e.to_dict().get("reason") == "ScalingReplicaSet")
    assert scaling["involvedObject"]["kind"] == "Deployment" and scaling["involvedObject"]["name"] == "ev"
    assert scaling["message"].startswith("Scaled up replica set ev-") and scaling["message"].endswith("from 0 to 2")
    assert scaling["source"]["component"] == "deployment-controller"
