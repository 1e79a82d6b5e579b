"""Deleting a bound pod with a grace period far beyond any calendar: the deletion is recorded (its
timestamp a century away, the grace period as asked), never a 500 from date arithmetic."""

from __future__ import annotations

import httpx


def test_a_huge_grace_period_marks_the_pod_for_deletion(c: httpx.Client, ns: str) -> None:
    pods = f"/api/v1/namespaces/{ns}/pods"
    pod = {"metadata": {"name": "slow"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert c.post(pods, json=pod).status_code == 201
    bound = c.post(f"{pods}/slow/binding", json={"metadata": {"name": "slow"}, "target": {"kind": "Node",
                                                                                          "name": "node-1"}})
    assert bound.status_code == 201, bound.text
    grace = 2**40
    dry = c.delete(f"{pods}/slow", params={"dryRun": "All", "gracePeriodSeconds": grace})
    assert dry.status_code == 200, dry.text
    assert "deletionTimestamp" not in c.get(f"{pods}/slow").json()["metadata"]
    r = c.delete(f"{pods}/slow", params={"gracePeriodSeconds": grace})
    assert r.status_code == 200, r.text
    meta = c.get(f"{pods}/slow").json()["metadata"]
    assert meta["deletionGracePeriodSeconds"] == grace
    assert meta["deletionTimestamp"] > "2100-01-01T00:00:00Z"
    assert c.delete(f"{pods}/slow", params={"gracePeriodSeconds": 0}).status_code == 200
    assert c.get(f"{pods}/slow").status_code == 404
