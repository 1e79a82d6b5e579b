"""The real kubectl with client-go's WatchListClient on (what 1.35+ do by default): `wait` and
`delete` stream their lists with sendInitialEvents and finish on the initial-events-end bookmark."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.kubectl import sdk_bin

SDK_BIN = sdk_bin()
KUBECTL = SDK_BIN / "kubectl.1.33"

pytestmark = pytest.mark.skipif(not KUBECTL.exists(), reason="kubectl 1.33 is not installed")

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: streamed, namespace: watch-list}
data: {k: v}
"""


def test_wait_and_delete_use_streaming_lists(api: ApiServerHarness, tmp_path: Path) -> None:
    env = {**os.environ, "KUBE_FEATURE_WatchListClient": "true"}

    def k(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([str(KUBECTL), "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir",
                              str(tmp_path / "cache"), *args], capture_output=True, text=True, input=stdin,
                             env=env, timeout=60)
        assert out.returncode == 0, f"kubectl {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}"
        return out

    k("create", "-f", "-", stdin="apiVersion: v1\nkind: Namespace\nmetadata:\n  name: watch-list\n")
    k("create", "-f", "-", stdin=CONFIGMAP)
    waited = k("wait", "-n", "watch-list", "--for=jsonpath={.data.k}=v", "cm/streamed", "--timeout=20s", "-v=6")
    assert "condition met" in waited.stdout
    assert "sendInitialEvents=true" in waited.stderr
    deleted = k("delete", "-n", "watch-list", "cm/streamed", "--timeout=20s")
    assert 'configmap "streamed" deleted' in deleted.stdout
