"""The browser view against a whole cluster, in a real headless Chromium kept open across changes.

The page is loaded once, signed in through its form with the kubeconfig's token, and asked to
follow a Deployment applied during the test; its timeline must show a row per actor of the chain
(the same trace `pkctl trace` finds), with the facts of a hop on click. A `kubectl scale` then
starts a newer trace, which the same page must draw without being reloaded (a marker set in the
page before the scale is still there after it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from tests.e2e.chromium import HeadlessChromium, chromium_binary

pytestmark = pytest.mark.e2e

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: busybox
        resources:
          requests: {cpu: 10m}
"""

ROWS = "[...document.querySelectorAll('#timeline .row')].map(r => r.dataset.actor)"


@pytest.fixture
def browser() -> Iterator[HeadlessChromium]:
    if chromium_binary() is None:
        pytest.skip("chromium is not installed")
    with HeadlessChromium() as b:
        yield b


def token_of(cluster: Cluster) -> str:
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    return str(config["users"][0]["user"]["token"])


def traced(cluster: Cluster, ns: str) -> str:
    out = cluster.pkctl("trace", "deploy/web", "-n", ns, "-o", "json")
    assert out.returncode == 0, out.stderr
    return str(json.loads(out.stdout)["traceID"])


def rows(browser: HeadlessChromium) -> list[str]:
    return list(browser.evaluate(ROWS) or [])


def shows_chain(browser: HeadlessChromium) -> list[str] | None:
    actors = rows(browser)
    wanted = ("kube-apiserver", "deployment-controller", "replicaset-controller", "default-scheduler")
    ok = all(a in actors for a in wanted) and any(a.startswith("kubelet/") for a in actors)
    return actors if ok else None


def click_fact(browser: HeadlessChromium, actor: str, word: str) -> str:
    """Click the first bar in `actor`'s row whose facts mention `word`; the detail panel's text."""
    found = browser.evaluate(f"""(() => {{
        const runs = [...document.querySelectorAll('#timeline .row[data-actor^="{actor}"] .run')];
        const run = runs.find(r => r.title.includes({json.dumps(word)}));
        if (!run) return false;
        run.click();
        return true;
    }})()""")
    return str(browser.evaluate("document.getElementById('hop-detail').textContent")) if found else ""


def test_the_page_draws_a_deployments_chain_and_follows_it_live(cluster: Cluster, ns: str,
                                                                 browser: HeadlessChromium) -> None:
    base = f"https://127.0.0.1:{cluster.port}"
    browser.navigate(f"{base}/ui/")
    assert "Sign in" in browser.text()
    # The page itself is public; its data is not.
    assert browser.evaluate("fetch('/debug/traces/chain?object=x').then(r => r.status)") == 401
    assert browser.evaluate("fetch('/api/v1/nodes').then(r => r.status)") == 401

    browser.evaluate(f"document.getElementById('token').value = {json.dumps(token_of(cluster))};"
                     "document.getElementById('login-form').requestSubmit()")
    eventually_sync(lambda: "signed in as" in browser.text() and "Ready" in browser.text(), timeout=20)
    assert browser.evaluate("sessionStorage.getItem('picokube.token') !== null")
    overview: dict[str, Any] = browser.evaluate(
        "({nodes: [...document.querySelectorAll('#nodes li')].map(l => l.className + ' ' + l.textContent),"
        " components: [...document.querySelectorAll('#components li')].map(l => l.dataset.component),"
        " ready: document.getElementById('readyz').textContent})")
    assert overview["ready"].startswith("ready")
    assert any(n.startswith("ok ") and "Ready" in n for n in overview["nodes"])
    assert overview["components"] == ["controller-manager", "scheduler", "kubelet"]

    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)
    browser.evaluate(f"document.getElementById('namespace').value = {json.dumps(ns)};"
                     "document.getElementById('name').value = 'web';"
                     "document.getElementById('pick').requestSubmit()")
    actors = eventually_sync(lambda: shows_chain(browser), timeout=60)
    assert actors is not None and actors[0] == "kube-apiserver"
    labels = browser.evaluate("[...document.querySelectorAll('#timeline .label')].map(l => l.textContent)")
    assert {"kube-apiserver", "deployment-controller", "replicaset-controller", "default-scheduler"} <= set(labels)
    first = browser.evaluate("document.getElementById('trace-id').textContent")
    assert traced(cluster, ns) in first

    # A hop's facts, as pkctl trace prints them: what it reacted to, what it wrote, resourceVersions.
    scheduling = eventually_sync(lambda: click_fact(browser, "default-scheduler", "chose"), timeout=30)
    assert "reacted   ADDED pod/" in scheduling and "rv=" in scheduling and "chose     node-" in scheduling
    creating = click_fact(browser, "kube-apiserver", "create deployments")
    assert "create deployments/web -> rv=" in creating and "etcd create" in creating
    starting = eventually_sync(lambda: click_fact(browser, "kubelet", "StartContainer"), timeout=60)
    assert "StartContainer" in starting and "RunPodSandbox" in starting

    # A link with ?token= signs in without the form and leaves no token in the address bar.
    status = json.loads(cluster.picokube("status", "-o", "json").stdout)
    assert status["ui"] == f"{base}/ui/"
    browser.evaluate("sessionStorage.clear()")
    browser.navigate(f"{status['ui']}?token={token_of(cluster)}")
    eventually_sync(lambda: "signed in as" in browser.text(), timeout=20)
    assert "token=" not in str(browser.evaluate("window.location.href"))
    browser.evaluate(f"document.getElementById('namespace').value = {json.dumps(ns)};"
                     "document.getElementById('name').value = 'web';"
                     "document.getElementById('pick').requestSubmit()")
    eventually_sync(lambda: shows_chain(browser), timeout=60)

    # Live: the same page, never reloaded, moves on to the trace a scale starts.
    browser.evaluate("window.keptAcrossChanges = 42")
    cluster.kubectl_ok("scale", "-n", ns, "deploy/web", "--replicas=3")
    before = first.rsplit(" ", 1)[-1]
    newer = eventually_sync(lambda: next((t for t in [traced(cluster, ns)] if t != before), None), timeout=30)
    eventually_sync(lambda: newer in str(browser.evaluate("document.getElementById('trace-id').textContent")),
                    timeout=30)
    eventually_sync(lambda: "replicaset-controller" in rows(browser) and "default-scheduler" in rows(browser),
                    timeout=30)
    assert click_fact(browser, "kube-apiserver", "scale") or click_fact(browser, "kube-apiserver", "deployments")
    assert browser.evaluate("window.keptAcrossChanges") == 42
