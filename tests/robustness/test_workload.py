"""The convergence check accepts exactly a converged Deployment."""

from __future__ import annotations

import copy
from typing import Any

from kube.testing.robustness.workload import check_converged, deployment_manifest


def converged(replicas: int = 2) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    d = deployment_manifest("web", replicas=replicas)
    d["metadata"]["generation"] = 3
    d["status"] = {"observedGeneration": 3, "replicas": replicas, "updatedReplicas": replicas,
                   "availableReplicas": replicas}
    rs = {"metadata": {"name": "web-h1", "labels": {"pod-template-hash": "h1"}},
          "spec": {"template": copy.deepcopy(d["spec"]["template"])}}
    pods = [{"metadata": {"name": f"web-h1-{i}", "uid": f"u{i}", "labels": {"pod-template-hash": "h1"}},
             "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
            for i in range(replicas)]
    return d, [rs], pods


def test_a_converged_deployment_passes() -> None:
    assert check_converged(*converged()) == []


def test_missing_or_unready_or_extra_pods_fail() -> None:
    d, rss, pods = converged()
    assert check_converged(d, rss, pods[:1])
    pods[0]["status"]["conditions"][0]["status"] = "False"
    assert check_converged(d, rss, pods)
    d, rss, pods = converged()
    assert check_converged(d, rss, [*pods, {**pods[0], "metadata": {**pods[0]["metadata"], "name": "x", "uid": "x"}}])


def test_an_old_template_pod_or_a_lagging_status_fails() -> None:
    d, rss, pods = converged()
    old = {"metadata": {"name": "web-h0-a", "uid": "o", "labels": {"pod-template-hash": "h0"}},
           "status": {"phase": "Running"}}
    assert check_converged(d, rss, [*pods, old])
    d["status"]["observedGeneration"] = 2
    assert check_converged(d, rss, pods)
