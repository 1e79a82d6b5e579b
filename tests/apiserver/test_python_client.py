"""The official `kubernetes` Python client against the API server: CRUD, conflicts, paging, watch."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config, utils, watch
from kubernetes.client.exceptions import ApiException

from kube.testing.apiserver import ApiServerHarness

NS = "pyclient"


@pytest.fixture(scope="module")
def k8s(api: ApiServerHarness) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(config_file=str(api.kubeconfig("admin")))
    core = client.CoreV1Api(api_client)
    try:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    except ApiException as e:
        assert e.status == 409
    yield api_client
    api_client.close()


def pod(name: str, **labels: str) -> client.V1Pod:
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels=labels or None),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))


def meta(obj: Any) -> client.V1ObjectMeta:
    """The metadata of an object the server returned (every field of the client's models is optional)."""
    assert obj.metadata is not None
    m: client.V1ObjectMeta = obj.metadata
    return m


def test_crud_conflict_and_not_found(k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    created = core.create_namespaced_pod(NS, pod("crud", app="a"))  # POST without apiVersion/kind in the body
    assert created.status is not None
    assert meta(created).uid and created.status.phase == "Pending"
    read = core.read_namespaced_pod("crud", NS)
    read_labels = meta(read).labels
    assert read_labels is not None
    read_labels["extra"] = "1"
    replaced = core.replace_namespaced_pod("crud", NS, read)  # PUT re-sends creationTimestamp as +00:00
    assert meta(replaced).labels == {"app": "a", "extra": "1"}
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_pod("crud", NS, read)  # stale resourceVersion
    assert conflict.value.status == 409 and "the object has been modified" in str(conflict.value.body)
    patched = core.patch_namespaced_pod("crud", NS, {"metadata": {"labels": {"extra": None, "p": "2"}}})
    assert meta(patched).labels == {"app": "a", "p": "2"}  # a dict body is a strategic merge patch
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_pod("nope", NS)
    assert missing.value.status == 404
    assert core.list_namespaced_config_map("default", label_selector="none=here").items == []
    core.delete_namespaced_pod("crud", NS, propagation_policy="Background")


def test_deployment_scale_and_status(k8s: client.ApiClient) -> None:
    apps = client.AppsV1Api(k8s)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "py", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "py"}},
                     "template": {"metadata": {"labels": {"app": "py"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    utils.create_from_dict(k8s, body)
    scale = apps.patch_namespaced_deployment_scale("py", NS, {"spec": {"replicas": 4}})
    assert scale.spec is not None and scale.spec.replicas == 4
    deploy = apps.read_namespaced_deployment("py", NS)
    assert deploy.spec is not None and deploy.spec.replicas == 4 and meta(deploy).generation == 2
    status = apps.patch_namespaced_deployment_status("py", NS, {"status": {"replicas": 4, "observedGeneration": 2}})
    assert status.status is not None and status.status.replicas == 4 and meta(status).generation == 2


def test_pagination(k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    for i in range(5):
        core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"page-{i}",
                                                                                              labels={"page": "y"})))
    names: list[str] = []
    token = None
    while True:
        page = core.list_namespaced_config_map(NS, label_selector="page=y", limit=2, _continue=token)
        names += [meta(c).name or "" for c in page.items]
        assert page.metadata is not None
        token = page.metadata._continue
        if not token:
            break
    assert names == [f"page-{i}" for i in range(5)]


def test_binding_subresource(k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    core.create_namespaced_pod(NS, pod("tobind"))
    binding = client.V1Binding(metadata=client.V1ObjectMeta(name="tobind"),
                               target=client.V1ObjectReference(kind="Node", name="node-1"))
    core.create_namespaced_pod_binding("tobind", NS, binding, _preload_content=False)
    bound = core.read_namespaced_pod("tobind", NS)
    assert bound.spec is not None and bound.spec.node_name == "node-1"


def test_watch_resumes_and_expires(k8s: client.ApiClient) -> None:
    core = client.CoreV1Api(k8s)
    listed = core.list_namespaced_config_map(NS)
    assert listed.metadata is not None
    start = listed.metadata.resource_version
    seen: list[tuple[str, str]] = []

    def writer() -> None:
        time.sleep(0.3)
        core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w1")))
        core.patch_namespaced_config_map("w1", NS, {"data": {"a": "1"}})
        core.delete_namespaced_config_map("w1", NS)

    t = threading.Thread(target=writer)
    t.start()
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=start, timeout_seconds=10):
        obj: Any = ev["object"]
        seen.append((ev["type"], obj.metadata.name))
        if ev["type"] == "DELETED":
            w.stop()
    t.join()
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]
    # resuming from the last resourceVersion of an earlier watch sees only later events
    resumed = [e["type"] for e in watch.Watch().stream(core.list_namespaced_config_map, NS,
                                                       resource_version=w.resource_version, timeout_seconds=1)]
    assert resumed == []
    with pytest.raises(ApiException) as gone:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, NS, resource_version="1", timeout_seconds=5):
            pass
    assert gone.value.status == 410


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: httpd, image: httpd, ports: [{containerPort: 80, name: http}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
"""


def test_create_from_yaml_of_a_deployment_and_a_service(k8s: client.ApiClient, tmp_path: Any) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(MANIFEST)
    created = utils.create_from_yaml(k8s, str(path), namespace=NS)
    kinds = [obj.kind for group in created for obj in group]
    assert kinds == ["Deployment", "Service"]
    svc = client.CoreV1Api(k8s).read_namespaced_service("web", NS)
    assert svc.spec is not None and svc.spec.cluster_ip and svc.spec.ports is not None
    assert svc.spec.type == "ClusterIP" and svc.spec.ports[0].target_port == "http"
    slices = client.DiscoveryV1Api(k8s).list_namespaced_endpoint_slice("default")
    assert "kubernetes" in [meta(s).name for s in slices.items]
