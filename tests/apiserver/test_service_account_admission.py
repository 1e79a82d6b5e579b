"""The ServiceAccount admission plugin on a real API server: the `kube-api-access-*` volume and its
mounts, the ways to opt out, and the refusal of a pod whose service account does not exist."""

from __future__ import annotations

import re
import ssl
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.admission.defaults import default_admission
from apiserver.registry.resource_registry import ResourceRegistry
from kube.testing.apiserver import ApiServerHarness

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_SOURCE = {"defaultMode": 420, "sources": [
    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {"downwardAPI": {"items": [{"path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    """A server with the ServiceAccount plugin on (the shared harness turns it off)."""
    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint,
                          disable_admission_plugins=()) as harness:
        yield harness


@pytest.fixture
def ns(c: httpx.Client) -> str:
    """A namespace with its `default` service account, as the serviceaccount controller leaves it."""
    name = f"sa-{uuid.uuid4().hex[:6]}"
    assert c.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    assert c.post(f"/api/v1/namespaces/{name}/serviceaccounts",
                  json={"metadata": {"name": "default"}}).status_code == 201
    return name


def pod(name: str, **spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "c", "image": "busybox"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": containers, **spec}}


def create(c: httpx.Client, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def token_volumes(p: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in p["spec"].get("volumes") or [] if v["name"].startswith("kube-api-access-")]


def test_every_container_mounts_the_api_access_volume(c: httpx.Client, ns: str) -> None:
    created = create(c, ns, pod("web", initContainers=[{"name": "init", "image": "busybox"}],
                                containers=[{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]))
    spec = created["spec"]
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    [volume] = token_volumes(created)
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == TOKEN_SOURCE
    for container in spec["initContainers"] + spec["containers"]:
        assert container["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT}]
    # What was stored is what a read returns: the volume survives validation and the round trip.
    assert c.get(f"/api/v1/namespaces/{ns}/pods/web").json()["spec"]["volumes"] == spec["volumes"]


def test_an_existing_mount_at_the_path_is_left_alone(c: httpx.Client, ns: str) -> None:
    own = {"name": "own", "mountPath": MOUNT}
    created = create(c, ns, pod("own-mount", volumes=[{"name": "own", "emptyDir": {}}], containers=[
        {"name": "mine", "image": "busybox", "volumeMounts": [own]}, {"name": "other", "image": "busybox"}]))
    mine, other = created["spec"]["containers"]
    assert mine["volumeMounts"] == [own]
    [volume] = token_volumes(created)
    assert other["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT}]
    alone = create(c, ns, pod("only-own", volumes=[{"name": "own", "emptyDir": {}}],
                              containers=[{"name": "mine", "image": "busybox", "volumeMounts": [own]}]))
    assert token_volumes(alone) == []


def test_automount_false_on_the_pod_or_its_account_opts_out(c: httpx.Client, ns: str) -> None:
    assert token_volumes(create(c, ns, pod("off", automountServiceAccountToken=False))) == []
    c.post(f"/api/v1/namespaces/{ns}/serviceaccounts",
           json={"metadata": {"name": "quiet"}, "automountServiceAccountToken": False})
    assert token_volumes(create(c, ns, pod("quiet", serviceAccountName="quiet"))) == []
    # The pod's own choice wins over its account's.
    loud = create(c, ns, pod("loud", serviceAccountName="quiet", automountServiceAccountToken=True))
    assert len(token_volumes(loud)) == 1


def test_the_accounts_image_pull_secrets_are_copied(c: httpx.Client, ns: str) -> None:
    c.post(f"/api/v1/namespaces/{ns}/serviceaccounts",
           json={"metadata": {"name": "puller"}, "imagePullSecrets": [{"name": "registry"}]})
    assert create(c, ns, pod("pulls", serviceAccountName="puller"))["spec"]["imagePullSecrets"] == [
        {"name": "registry"}]
    own = create(c, ns, pod("own-pull", serviceAccountName="puller", imagePullSecrets=[{"name": "mine"}]))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


def test_a_pod_of_a_missing_account_is_refused(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("orphan", serviceAccountName="nobody"))
    assert resp.status_code == 403
    assert resp.json()["message"] == ('pods "orphan" is forbidden: error looking up service account '
                                      f'{ns}/nobody: serviceaccount "nobody" not found')
    generated = {"metadata": {"generateName": "gen-"}, "spec": pod("x", serviceAccountName="nobody")["spec"]}
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=generated)
    assert resp.status_code == 403 and resp.json()["message"].startswith('pods "gen-" is forbidden: ')
    assert c.get(f"/api/v1/namespaces/{ns}/pods/orphan").status_code == 404


def test_a_pod_waits_briefly_for_the_default_account(c: httpx.Client) -> None:
    name = f"fresh-{uuid.uuid4().hex[:6]}"
    assert c.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    started = time.monotonic()
    resp = c.post(f"/api/v1/namespaces/{name}/pods", json=pod("early"))
    assert resp.status_code == 403 and 'serviceaccount "default" not found' in resp.json()["message"]
    assert time.monotonic() - started >= 0.9  # ten looks at least 100 ms apart before giving up

    # The controller's account arriving while the pod waits lets the create through.
    def create_default_account() -> None:
        time.sleep(0.3)
        c.post(f"/api/v1/namespaces/{name}/serviceaccounts", json={"metadata": {"name": "default"}})
    helper = threading.Thread(target=create_default_account)
    helper.start()
    try:
        resp = c.post(f"/api/v1/namespaces/{name}/pods", json=pod("waited"))
    finally:
        helper.join()
    assert resp.status_code == 201, resp.text
    assert len(token_volumes(resp.json())) == 1


def test_a_mirror_pod_is_not_changed_and_may_not_name_an_account(c: httpx.Client, ns: str) -> None:
    mirror = {"kubernetes.io/config.mirror": "hash"}
    plain = pod("static")
    plain["metadata"]["annotations"] = mirror
    created = create(c, ns, plain)
    assert token_volumes(created) == [] and not created["spec"].get("serviceAccountName")
    named = pod("static-sa", serviceAccountName="default")
    named["metadata"]["annotations"] = mirror
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=named)
    assert resp.status_code == 403
    assert resp.json()["message"] == 'pods "static-sa" is forbidden: a mirror pod may not reference service accounts'


def test_the_plugin_can_be_turned_off_by_name(tmp_path: Path) -> None:
    registry = ResourceRegistry()
    with pytest.raises(ValueError, match="unknown admission plugins: Nope"):
        default_admission(registry, disabled=["Nope"])


def test_the_shared_harness_defaults_names_but_mounts_nothing(admin_http: httpx.Client, api: ApiServerHarness,
                                                             tmp_path: Path) -> None:
    """Off (the shared harness), a pod keeps what it was sent: no account check, no volume."""
    with ApiServerHarness(tmp_path, etcd_endpoint=api.etcd_endpoint) as off, \
            httpx.Client(base_url=off.server, verify=ssl.create_default_context(cafile=str(off.pki.ca_cert)),
                         headers={"Authorization": f"Bearer {off.token('admin')}"}, timeout=30) as client:
        created = create(client, "default", pod("bare", serviceAccountName="nobody"))
        assert token_volumes(created) == []


def test_a_pod_recreated_from_its_own_spec_keeps_one_volume(c: httpx.Client, ns: str) -> None:
    """`kubectl get pod -o json | kubectl create -f -` under another name: the volume is reused, not doubled."""
    first = create(c, ns, pod("original"))
    copy = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "copy"}, "spec": first["spec"]}
    second = create(c, ns, copy)
    assert token_volumes(second) == token_volumes(first)
    assert len(second["spec"]["containers"][0]["volumeMounts"]) == 1


STRICT = "kubernetes.io/enforce-mountable-secrets"


@pytest.mark.parametrize(("extra", "message"), [
    ({"volumes": [{"name": "v", "secret": {"secretName": "nope"}}]},
     'volume with secret.secretName="nope" is not allowed because service account strict does not reference that '
     "secret"),
    ({"containers": [{"name": "c", "image": "busybox", "env": [
        {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}]}]},
     'container c with envVar PW referencing secret.secretName="nope" is not allowed because service account strict '
     "does not reference that secret"),
    ({"initContainers": [{"name": "i", "image": "busybox", "envFrom": [{"secretRef": {"name": "nope"}}]}]},
     'init container i with envFrom referencing secret.secretName="nope" is not allowed because service account '
     "strict does not reference that secret"),
    ({"imagePullSecrets": [{"name": "other"}]},
     'imagePullSecrets[0].name="other" is not allowed because service account strict does not reference that '
     "imagePullSecret"),
])
def test_an_account_can_hold_its_pods_to_its_secrets(c: httpx.Client, ns: str, extra: dict[str, Any],
                                                      message: str) -> None:
    c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={
        "metadata": {"name": "strict", "annotations": {STRICT: "true"}}, "secrets": [{"name": "ok"}],
        "imagePullSecrets": [{"name": "pull"}]})
    allowed = create(c, ns, pod("fine", serviceAccountName="strict",
                                volumes=[{"name": "v", "secret": {"secretName": "ok"}}]))
    assert allowed["spec"]["imagePullSecrets"] == [{"name": "pull"}]
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod("held", serviceAccountName="strict", **extra))
    assert resp.status_code == 403
    assert resp.json()["message"] == f'pods "held" is forbidden: {message}'


def test_an_ephemeral_container_is_held_to_the_accounts_secrets(c: httpx.Client, ns: str) -> None:
    c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={
        "metadata": {"name": "strict", "annotations": {STRICT: "true"}}, "secrets": [{"name": "ok"}]})
    create(c, ns, pod("debugged", serviceAccountName="strict"))
    url = f"/api/v1/namespaces/{ns}/pods/debugged/ephemeralcontainers"
    smp = {"Content-Type": "application/strategic-merge-patch+json"}

    def debugger(name: str, secret: str) -> dict[str, Any]:
        return {"spec": {"ephemeralContainers": [{"name": name, "image": "busybox",
                                                  "envFrom": [{"secretRef": {"name": secret}}]}]}}
    refused = c.patch(url, json=debugger("bad", "nope"), headers=smp)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'pods "debugged" is forbidden: ephemeral container bad with envFrom referencing secret.secretName="nope" is '
        "not allowed because service account strict does not reference that secret")
    assert c.patch(url, json=debugger("good", "ok"), headers=smp).status_code == 200
