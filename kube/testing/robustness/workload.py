"""The Deployment the faults hit: rolled out and scaled all along, then required to converge.

`Rollouts.run` changes the pod template or the replica count every few seconds (seeded);
`check_converged` is the pure convergence test over one read of the Deployment, its
ReplicaSets and its pods: exactly `spec.replicas` pods, all of the newest template, all
Ready, and no pod of another ReplicaSet left alive.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from kube.client.rest import RESTClient
from kube.testing.robustness.recorders import TRANSIENT, resource

__all__ = ["deployment_manifest", "Rollouts", "check_converged"]

HASH_LABEL = "pod-template-hash"


def deployment_manifest(name: str, *, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {"rollout": "0"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}}


class Rollouts:
    """Rolls `name` out (template annotation) or scales it (between `low` and `high`) every `period` seconds."""

    def __init__(self, client: RESTClient, *, namespace: str, name: str, rng: random.Random, low: int = 3,
                 high: int = 6, period: float = 4.0) -> None:
        self.client, self.namespace, self.name, self.rng = client, namespace, name, rng
        self.low, self.high, self.period = low, high, period
        self.rollouts = self.scales = 0

    async def run(self) -> None:
        info = resource("apps", "deployments")
        while True:
            await asyncio.sleep(self.period)
            if self.rng.random() < 0.6:
                patch: dict[str, Any] = {"spec": {"template": {"metadata": {"annotations": {
                    "rollout": str(self.rollouts + 1)}}}}}
            else:
                patch = {"spec": {"replicas": self.rng.randint(self.low, self.high)}}
            try:
                await self.client.patch_raw(info, self.name, patch, self.namespace)
            except TRANSIENT:
                continue
            if "template" in patch["spec"]:
                self.rollouts += 1
            else:
                self.scales += 1


def _ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _live(pod: dict[str, Any]) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def check_converged(deployment: dict[str, Any], replicasets: list[dict[str, Any]],
                    pods: list[dict[str, Any]]) -> list[str]:
    """What keeps the Deployment from having converged (empty once it has)."""
    spec, meta = deployment["spec"], deployment["metadata"]
    want, template = int(spec.get("replicas", 1)), spec["template"]
    newest = [rs for rs in replicasets
              if (rs["spec"]["template"].get("metadata") or {}).get("annotations") ==
              (template.get("metadata") or {}).get("annotations")
              and rs["spec"]["template"].get("spec") == template.get("spec")]
    if len(newest) != 1:
        return [f"{len(newest)} ReplicaSets carry the current template"]
    new_hash = newest[0]["metadata"]["labels"].get(HASH_LABEL)
    live = [p for p in pods if _live(p)]
    problems = []
    stale = [p["metadata"]["name"] for p in live if p["metadata"].get("labels", {}).get(HASH_LABEL) != new_hash]
    if stale:
        problems.append(f"pods of an old template still live: {sorted(stale)}")
    current = [p for p in live if p["metadata"].get("labels", {}).get(HASH_LABEL) == new_hash]
    if len(current) != want or not all(_ready(p) for p in current):
        problems.append(f"{sum(map(_ready, current))} of {len(current)} current pods Ready, {want} wanted")
    names, uids = {p["metadata"]["name"] for p in pods}, {p["metadata"]["uid"] for p in pods}
    if len(names) != len(pods) or len(uids) != len(pods):
        problems.append("duplicate pod names or uids")
    status = deployment.get("status") or {}
    if status.get("observedGeneration") != meta.get("generation") or status.get("updatedReplicas") != want or \
            status.get("availableReplicas") != want or status.get("replicas") != want:
        problems.append(f"status not caught up: {status}")
    return problems
