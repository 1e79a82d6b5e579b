"""The official `kubernetes` Python client with ReplicationControllers, StatefulSets, Jobs and
DaemonSets: the client's own e2e flows for ReplicationControllers, Jobs (create, read, delete
in the background) and DaemonSets (create, read, delete with a DeleteOptions body), the scale
subresource, and the defaults and validation of each kind as the client sees them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kube.testing.apiserver import ApiServerHarness

NS = "pyclient-workloads"


@pytest.fixture(scope="module")
def k8s(api: ApiServerHarness) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(config_file=str(api.kubeconfig("admin")))
    try:
        client.CoreV1Api(api_client).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    except ApiException as e:
        assert e.status == 409
    yield api_client
    api_client.close()


def _rc_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"labels": {"name": name}, "name": name},
            "spec": {"replicas": 2, "selector": {"name": name},
                     "template": {"metadata": {"labels": {"name": name}},
                                  "spec": {"containers": [{"image": "nginx", "name": "nginx",
                                                           "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}}}


def test_replication_controller_apis(k8s: client.ApiClient) -> None:
    core: Any = client.CoreV1Api(k8s)  # responses read field by field; the stubs make every field optional
    name = f"frontend-{uuid.uuid4().hex[:12]}"
    created = core.create_namespaced_replication_controller(body=_rc_manifest(name), namespace=NS)
    assert (created.metadata.name, created.spec.replicas) == (name, 2)
    read = core.read_namespaced_replication_controller(name=name, namespace=NS)
    assert (read.metadata.name, read.spec.replicas) == (name, 2)
    assert read.spec.template.spec.restart_policy == "Always"  # the template is defaulted
    core.delete_namespaced_replication_controller(name=name, namespace=NS, propagation_policy="Background")
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_replication_controller(name=name, namespace=NS)
    assert gone.value.status == 404


def test_replication_controller_scale_and_listing(k8s: client.ApiClient) -> None:
    core: Any = client.CoreV1Api(k8s)  # responses read field by field; the stubs make every field optional
    name = f"scaled-{uuid.uuid4().hex[:6]}"
    core.create_namespaced_replication_controller(body=_rc_manifest(name), namespace=NS)
    scale = core.read_namespaced_replication_controller_scale(name, NS)
    assert (scale.spec.replicas, scale.status.selector) == (2, f"name={name}")
    core.patch_namespaced_replication_controller_scale(name, NS, {"spec": {"replicas": 5}})
    assert core.read_namespaced_replication_controller(name, NS).spec.replicas == 5
    with pytest.raises(ApiException) as negative:
        core.patch_namespaced_replication_controller_scale(name, NS, {"spec": {"replicas": -1}})
    assert negative.value.status == 422
    names = [rc.metadata.name for rc in core.list_namespaced_replication_controller(NS).items]
    assert name in names


def test_statefulset_defaults_and_validation(k8s: client.ApiClient) -> None:
    apps: Any = client.AppsV1Api(k8s)
    name = f"db-{uuid.uuid4().hex[:6]}"
    body: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "db", "image": "postgres"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    created = apps.create_namespaced_stateful_set(NS, body)
    spec = created.spec
    assert (spec.replicas, spec.pod_management_policy, spec.revision_history_limit) == (1, "OrderedReady", 10)
    assert (spec.update_strategy.type, spec.update_strategy.rolling_update.partition) == ("RollingUpdate", 0)
    policy = spec.persistent_volume_claim_retention_policy
    assert (policy.when_deleted, policy.when_scaled) == ("Retain", "Retain")
    assert [c.metadata.name for c in spec.volume_claim_templates] == ["data"]
    assert created.metadata.generation == 1

    with pytest.raises(ApiException) as frozen:
        apps.patch_namespaced_stateful_set(name, NS, {"spec": {"serviceName": "other"}})
    assert frozen.value.status == 422
    assert "updates to statefulset spec for fields other than" in str(frozen.value.body)
    scaled = apps.patch_namespaced_stateful_set_scale(name, NS, {"spec": {"replicas": 3}})
    assert scaled.spec.replicas == 3 and scaled.status.selector == f"app={name}"

    bad = {**body, "metadata": {"name": f"{name}-bad"},
           "spec": {**body["spec"], "podManagementPolicy": "Sometimes", "selector": {"matchLabels": {"app": "x"}}}}
    with pytest.raises(ApiException) as invalid:
        apps.create_namespaced_stateful_set(NS, bad)
    assert invalid.value.status == 422
    text = str(invalid.value.body)
    assert "spec.podManagementPolicy: Invalid value: \\\"Sometimes\\\": must be 'OrderedReady' or 'Parallel'" in text
    assert "`selector` does not match template `labels`" in text


def _job_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"name": name},
                                  "spec": {"containers": [{"image": "busybox", "name": name,
                                                           "command": ["sh", "-c", "sleep 5"]}],
                                           "restartPolicy": "Never"}}}}


def test_job_apis(k8s: client.ApiClient) -> None:
    batch: Any = client.BatchV1Api(k8s)  # responses read field by field; the stubs make every field optional
    name = f"test-job-{uuid.uuid4()}"
    created = batch.create_namespaced_job(body=_job_manifest(name), namespace=NS)
    assert created.metadata.name == name
    read = batch.read_namespaced_job(name=name, namespace=NS)
    assert read.metadata.name == name
    spec = read.spec
    assert (spec.completions, spec.parallelism, spec.backoff_limit, spec.completion_mode, spec.suspend) == \
        (1, 1, 6, "NonIndexed", False)
    uid = read.metadata.uid
    assert spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": uid}
    assert spec.template.metadata.labels["batch.kubernetes.io/job-name"] == name
    assert name in [j.metadata.name for j in batch.list_namespaced_job(NS).items]
    batch.delete_namespaced_job(name=name, namespace=NS, propagation_policy="Background")
    with pytest.raises(ApiException) as gone:
        batch.read_namespaced_job(name=name, namespace=NS)
    assert gone.value.status == 404


def test_job_template_is_immutable_and_restart_policy_checked(k8s: client.ApiClient) -> None:
    batch: Any = client.BatchV1Api(k8s)
    name = f"test-job-{uuid.uuid4().hex[:12]}"
    batch.create_namespaced_job(body=_job_manifest(name), namespace=NS)
    with pytest.raises(ApiException) as frozen:
        batch.patch_namespaced_job(name, NS, {"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}})
    assert frozen.value.status == 422
    assert "field is immutable" in str(frozen.value.body)
    always = _job_manifest(f"{name}-always")
    always["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    with pytest.raises(ApiException) as invalid:
        batch.create_namespaced_job(body=always, namespace=NS)
    assert invalid.value.status == 422
    assert "spec.template.spec.restartPolicy" in str(invalid.value.body)


def _daemonset_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"labels": {"app": "nginx"}, "name": name},
            "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"metadata": {"labels": {"app": "nginx"}, "name": name},
                                  "spec": {"containers": [{"name": "nginx-app", "image": "nginx:1.15.4"}]}},
                     "updateStrategy": {"type": "RollingUpdate"}}}


def test_create_daemonset(k8s: client.ApiClient) -> None:
    apps: Any = client.AppsV1Api(k8s)
    name = f"nginx-app-{uuid.uuid4()}"
    apps.create_namespaced_daemon_set(NS, body=_daemonset_manifest(name))
    read = apps.read_namespaced_daemon_set(name, NS)
    assert read.metadata.name == name
    spec = read.spec
    assert spec.revision_history_limit == 10
    rolling = spec.update_strategy.rolling_update
    assert (spec.update_strategy.type, rolling.max_unavailable, rolling.max_surge) == ("RollingUpdate", 1, 0)
    assert spec.template.spec.restart_policy == "Always"
    assert name in [d.metadata.name for d in apps.list_namespaced_daemon_set(NS).items]
    apps.delete_namespaced_daemon_set(name, NS, body=client.V1DeleteOptions())
    with pytest.raises(ApiException) as gone:
        apps.read_namespaced_daemon_set(name, NS)
    assert gone.value.status == 404


def test_daemonset_validation(k8s: client.ApiClient) -> None:
    apps: Any = client.AppsV1Api(k8s)
    name = f"nginx-app-{uuid.uuid4().hex[:12]}"
    body = _daemonset_manifest(name)
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    body["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(ApiException) as invalid:
        apps.create_namespaced_daemon_set(NS, body=body)
    assert invalid.value.status == 422
    text = str(invalid.value.body)
    assert "spec.template.spec.restartPolicy" in text
    assert "`selector` does not match template `labels`" in text
