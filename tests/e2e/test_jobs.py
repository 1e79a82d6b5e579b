"""Jobs as a user runs them with the real kubectl, on a whole cluster with simulated nodes:
`kubectl create job`, `kubectl wait --for=condition=complete`, `kubectl get jobs` and a
`kubectl delete job` that takes the Job's pods with it."""

from __future__ import annotations

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def test_kubectl_create_job_runs_to_completion(cluster: Cluster, ns: str) -> None:
    out = cluster.kubectl_ok("create", "job", "hello", "-n", ns, "--image=busybox:1.36", "--", "sh", "-c", "exit 0")
    assert out.strip() == "job.batch/hello created"
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=complete", "job/hello", "--timeout=90s")
    table = cluster.kubectl_ok("get", "jobs", "-n", ns).splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table[1].split()[:3] == ["hello", "Complete", "1/1"]
    wide = cluster.kubectl_ok("get", "jobs", "-n", ns, "-o", "wide").splitlines()
    assert wide[0].split()[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert "batch.kubernetes.io/controller-uid=" in wide[1]
    pods = cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "job-name=hello", "-o", "name").split()
    assert len(pods) == 1
    cluster.kubectl_ok("delete", "job", "hello", "-n", ns)

    def no_pods() -> bool:
        return not cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "job-name=hello", "-o", "name").strip()
    eventually_sync(no_pods, timeout=60)


INDEXED = """\
apiVersion: batch/v1
kind: Job
metadata: {name: shards}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36", command: [sh, -c, "sleep 0.5; exit 0"]}]
"""

CRASHING = """\
apiVersion: batch/v1
kind: Job
metadata: {name: crash}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: "busybox:1.36", command: [sh, -c, "exit 3"]}]
"""


def test_indexed_job_completes_every_index_and_a_crashing_job_fails(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=INDEXED)
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=CRASHING)
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=complete", "job/shards", "--timeout=90s")
    assert cluster.kubectl_ok("get", "job", "shards", "-n", ns, "-o", "jsonpath={.status.completedIndexes}") == "0-2"
    annotations = cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "job-name=shards", "-o",
                                     "jsonpath={.items[*].metadata.annotations.batch\\.kubernetes\\.io/"
                                     "job-completion-index}").split()
    assert sorted(annotations) == ["0", "1", "2"]
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=failed", "job/crash", "--timeout=120s")
    reason = cluster.kubectl_ok("get", "job", "crash", "-n", ns, "-o",
                                "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}")
    assert reason == "BackoffLimitExceeded"
    row = cluster.kubectl_ok("get", "job", "crash", "-n", ns, "--no-headers").split()
    assert row[:3] == ["crash", "Failed", "0/1"]


WIDE = """\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: 100
  parallelism: 100
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 0
      containers: [{{name: work, image: "busybox:1.36", command: [sh, -c, "exit 0"]}}]
"""


def test_a_wide_job_runs_exactly_its_completions(cluster: Cluster, ns: str) -> None:
    # Pods that finish while the controller writes status must not look missing: each round
    # creates all 100 pods at once and they finish at once, the race that once added extra pods.
    for round_ in range(4):
        name = f"wide-{round_}"
        cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=WIDE.format(name=name))
        cluster.kubectl_ok("wait", "-n", ns, "--for=condition=complete", f"job/{name}", "--timeout=120s",
                           timeout=150)
        succeeded = cluster.kubectl_ok("get", "job", name, "-n", ns, "-o", "jsonpath={.status.succeeded}")
        pods = cluster.kubectl_ok("get", "pods", "-n", ns, "-l", f"job-name={name}", "-o", "name").split()
        assert (succeeded, len(pods)) == ("100", 100)
