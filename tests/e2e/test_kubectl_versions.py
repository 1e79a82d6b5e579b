"""Every kubectl from 1.27 to 1.36 runs the same everyday script against picokube.

Each version gets its own namespace on one API server with a controller-manager, and runs:
apply with default validation, diff, edit, explain with descriptions, the `create`
generators, `auth can-i` (also `--list` and `--as`), `auth whoami`, `wait` and
`rollout status` returning once the condition holds, `debug` adding an ephemeral container
to a pod, and an apply of an unknown kind that says "no matches for kind". The failures of
one version are reported together, step by step.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from kube.testing.kubectl import KUBECTL_MINORS, kubectl_binary
from kube.testing.process import Process

pytestmark = pytest.mark.e2e

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  color: {color}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: idle
spec:
  replicas: 0
  selector: {matchLabels: {app: idle}}
  template:
    metadata: {labels: {app: idle}}
    spec:
      containers: [{name: c, image: busybox}]
"""
POD = """apiVersion: v1
kind: Pod
metadata:
  name: target
spec:
  containers: [{name: c, image: busybox}]
"""
UNKNOWN_KIND = """apiVersion: example.com/v1
kind: Gizmo
metadata:
  name: g
"""


@pytest.fixture(scope="module")
def controller_manager(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    with api.controller_manager(log_path=tmp_path_factory.mktemp("cm") / "controller-manager.log") as cm:
        yield cm


class Script:
    """Runs one kubectl version's steps and remembers which failed, and why."""

    def __init__(self, api: ApiServerHarness, minor: int, workdir: Path) -> None:
        self.binary, self.minor, self.workdir = kubectl_binary(minor), minor, workdir
        self.namespace = f"kubectl-1-{minor}"
        self.kubeconfig = api.kubeconfig("admin")
        self.failures: list[str] = []
        editor = workdir / "editor.sh"
        editor.write_text("#!/bin/sh\nsed -i 's/color: green/color: edited/' \"$1\"\n")
        editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
        self.env = {**os.environ, "KUBE_EDITOR": str(editor), "KUBECTL_EXTERNAL_DIFF": "diff -u"}

    def run(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.binary), "--kubeconfig", str(self.kubeconfig), "--cache-dir",
                               str(self.workdir / "cache"), "-n", self.namespace, *args], input=stdin,
                              capture_output=True, text=True, timeout=timeout, env=self.env)

    def step(self, name: str, *args: str, stdin: str | None = None, code: int = 0, says: str = "",
             timeout: float = 60) -> None:
        out = self.run(*args, stdin=stdin, timeout=timeout)
        text = out.stdout + out.stderr
        if out.returncode != code or says not in text:
            self.failures.append(f"{name}: exit {out.returncode} (wanted {code}), wanted {says!r} in: {text.strip()}")

    def file(self, name: str, text: str) -> str:
        path = self.workdir / name
        path.write_text(text)
        return str(path)


@pytest.mark.parametrize("minor", KUBECTL_MINORS)
def test_everyday_script(api: ApiServerHarness, controller_manager: Process, minor: int, tmp_path: Path) -> None:
    s = Script(api, minor, tmp_path)
    s.run("create", "namespace", s.namespace)
    assert s.run("get", "namespace", s.namespace).returncode == 0, "the namespace exists"
    eventually_sync(lambda: s.run("get", "serviceaccount", "default").returncode == 0, timeout=30,
                    message="the namespace's default service account")
    green, blue = s.file("cm.yaml", CONFIGMAP.format(color="green")), s.file("cm2.yaml", CONFIGMAP.format(color="blue"))
    s.step("apply", "apply", "-f", green, says="configmap/settings created")
    s.step("diff", "diff", "-f", blue, code=1, says="+  color: blue")
    s.step("edit", "edit", "configmap/settings", says="configmap/settings edited")
    s.step("explain", "explain", "pods.spec.containers", says="List of containers belonging to the pod")
    s.step("create configmap", "create", "configmap", "literal", "--from-literal=a=b", says="configmap/literal created")
    s.step("create secret", "create", "secret", "generic", "pw", "--from-literal=a=b", says="secret/pw created")
    s.step("create namespace", "create", "namespace", f"{s.namespace}-extra",
           says=f"namespace/{s.namespace}-extra created")
    s.step("create deployment", "create", "deployment", "made", "--image=busybox", "--replicas=0",
           says="deployment.apps/made created")
    s.step("create token", "create", "token", "default", says="eyJ")
    s.step("auth can-i", "auth", "can-i", "create", "pods", says="yes")
    s.step("auth can-i --list", "auth", "can-i", "--list", says="selfsubjectrulesreviews")
    s.step("auth can-i --as", "auth", "can-i", "create", "pods", "--as", "nobody", code=1, says="no")
    s.step("auth whoami", "auth", "whoami", says="admin")
    s.step("apply deployment", "apply", "-f", s.file("deploy.yaml", DEPLOYMENT), says="deployment.apps/idle created")
    s.step("rollout status", "rollout", "status", "deployment/idle", "--timeout=60s", says="successfully rolled out")
    s.step("wait", "wait", "--for=jsonpath={.data.color}=edited", "configmap/settings", "--timeout=30s",
           says="condition met")
    s.step("apply pod", "apply", "-f", s.file("pod.yaml", POD), says="pod/target created")
    s.step("debug", "debug", "pod/target", "--image=busybox", "--container=debugger")
    s.step("ephemeral container", "get", "pod/target", "-o", "jsonpath={.spec.ephemeralContainers[0].name}",
           says="debugger")
    s.step("unknown kind", "apply", "-f", s.file("gizmo.yaml", UNKNOWN_KIND), code=1,
           says='no matches for kind "Gizmo"')
    assert not s.failures, f"kubectl 1.{minor}:\n" + "\n".join(s.failures)
