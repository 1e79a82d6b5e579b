"""Defaults upstream fills in, observed through the API: what is stored is what the cluster does."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

PROBE: dict[str, Any] = {"httpGet": {"port": 8080}}


def test_pod_and_container_defaults(c: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "d"}, "spec": {"volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}],
                                               "containers": [{
        "name": "c", "image": "nginx:1.25", "ports": [{"containerPort": 80}], "livenessProbe": PROBE,
        "resources": {"limits": {"cpu": "1"}},
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]}}
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert resp.status_code == 201, resp.text
    spec = resp.json()["spec"]
    container = spec["containers"][0]
    assert container["livenessProbe"] == {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                          "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["terminationMessagePolicy"] == "File"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["resources"] == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    assert container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert spec["volumes"] == [{"name": "v", "emptyDir": {}},
                               {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}}]
    assert {k: spec[k] for k in ("restartPolicy", "dnsPolicy", "schedulerName", "securityContext",
                                 "terminationGracePeriodSeconds", "enableServiceLinks")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
        "securityContext": {}, "terminationGracePeriodSeconds": 30, "enableServiceLinks": True}


def test_template_gets_spec_defaults_but_not_pod_only_ones(c: httpx.Client, ns: str) -> None:
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t"},
         "spec": {"selector": {"matchLabels": {"app": "t"}},
                  "template": {"metadata": {"labels": {"app": "t"}},
                               "spec": {"containers": [{"name": "c", "image": "busybox",
                                                        "resources": {"limits": {"cpu": "1"}}}]}}}}
    resp = c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=d)
    assert resp.status_code == 201, resp.text
    spec = resp.json()["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (1, 10, 600)
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    tspec = spec["template"]["spec"]
    assert tspec["containers"][0]["imagePullPolicy"] == "Always"
    assert tspec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}  # requests come only on the pod
    assert "enableServiceLinks" not in tspec and tspec["schedulerName"] == "default-scheduler"


def test_secret_namespace_and_priority_class_defaults(c: httpx.Client, ns: str) -> None:
    secret = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "s"}})
    assert secret.status_code == 201 and secret.json()["type"] == "Opaque", secret.text
    labels = c.get(f"/api/v1/namespaces/{ns}").json()["metadata"]["labels"]
    assert labels["kubernetes.io/metadata.name"] == ns
    name = f"pc-{uuid.uuid4().hex[:6]}"
    pc = c.post("/apis/scheduling.k8s.io/v1/priorityclasses", json={"metadata": {"name": name}, "value": 5})
    assert pc.status_code == 201 and pc.json()["preemptionPolicy"] == "PreemptLowerPriority", pc.text
    c.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
