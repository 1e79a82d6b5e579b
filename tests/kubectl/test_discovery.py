"""Name resolution from discovery documents, as kubectl's RESTMapper resolves: table-driven.

The documents are shaped as the API server answers `/api` and `/apis` with aggregated
discovery; one group (`stable.example.com`) stands for a custom resource the static table
does not know, served in two versions.
"""

from __future__ import annotations

from typing import Any

import pytest

from kube.client.discovery import (
    RESTMapper,
    resources_from_aggregated,
    resources_from_resource_list,
)
from kubectl.context import (
    CommandError,
    info_for_manifest,
    resolve,
    resolve_targets,
    split_targets,
)
from kubectl.manifests import Manifest


def _entry(plural: str, kind: str, *, group: str = "", version: str = "v1", namespaced: bool = True,
           short: tuple[str, ...] = (), categories: tuple[str, ...] = (), subs: tuple[str, ...] = ()) -> dict[str, Any]:
    entry: dict[str, Any] = {"resource": plural, "singularResource": kind.lower(),
                             "scope": "Namespaced" if namespaced else "Cluster",
                             "responseKind": {"group": group, "version": version, "kind": kind},
                             "verbs": ["get", "list"]}
    if short:
        entry["shortNames"] = list(short)
    if categories:
        entry["categories"] = list(categories)
    if subs:
        entry["subresources"] = [{"subresource": s, "responseKind": {"group": group, "version": version,
                                                                     "kind": kind}, "verbs": ["get"]} for s in subs]
    return entry


def _group(name: str, *versions: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "versions": [{"version": v, "freshness": "Current", "resources": rs} for v, rs in versions]}


def _doc(*items: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
            "items": list(items)}


LEGACY = _doc(_group("", ("v1", [
    _entry("pods", "Pod", short=("po",), categories=("all",), subs=("status", "log")),
    _entry("nodes", "Node", namespaced=False, short=("no",), subs=("status",)),
    _entry("configmaps", "ConfigMap", short=("cm",)),
])))
GROUPS = _doc(
    _group("apps", ("v1", [_entry("deployments", "Deployment", group="apps", short=("deploy",),
                                  categories=("all",), subs=("status", "scale"))])),
    _group("stable.example.com",
           ("v1", [_entry("crontabs", "CronTab", group="stable.example.com", short=("ct",), categories=("all",))]),
           ("v1beta1", [_entry("crontabs", "CronTab", group="stable.example.com", version="v1beta1",
                               short=("ct",), categories=("all",))])),
    # A short name equal to another resource's plural: the exact name wins, as in kubectl.
    _group("example.com", ("v1", [_entry("gadgets", "Gadget", group="example.com", short=("nodes", "gd"))])),
)
MAPPER = RESTMapper([*resources_from_aggregated(LEGACY), *resources_from_aggregated(GROUPS)])


@pytest.mark.parametrize(("typed", "plural", "group", "version"), [
    ("pods", "pods", "", "v1"),
    ("pod", "pods", "", "v1"),
    ("po", "pods", "", "v1"),
    ("Pod", "pods", "", "v1"),
    ("PODS", "pods", "", "v1"),
    ("cm", "configmaps", "", "v1"),
    ("configmap", "configmaps", "", "v1"),
    ("deploy", "deployments", "apps", "v1"),
    ("deployments.apps", "deployments", "apps", "v1"),
    ("deploy.apps", "deployments", "apps", "v1"),
    ("Deployment.apps", "deployments", "apps", "v1"),
    ("deployments.v1.apps", "deployments", "apps", "v1"),
    ("ct", "crontabs", "stable.example.com", "v1"),  # the preferred version first
    ("crontab", "crontabs", "stable.example.com", "v1"),
    ("CronTab", "crontabs", "stable.example.com", "v1"),
    ("crontabs.stable.example.com", "crontabs", "stable.example.com", "v1"),
    ("crontabs.v1beta1.stable.example.com", "crontabs", "stable.example.com", "v1beta1"),
    ("nodes", "nodes", "", "v1"),  # a plural beats another resource's short name
    ("gd", "gadgets", "example.com", "v1"),
    ("nodes.example.com", "gadgets", "example.com", "v1"),  # within the group the short name applies
])
def test_names_resolve_as_kubectl(typed: str, plural: str, group: str, version: str) -> None:
    info = resolve(MAPPER, typed)
    assert (info.plural, info.group, info.version) == (plural, group, version)


@pytest.mark.parametrize(("typed", "message"), [
    ("widgets", 'the server doesn\'t have a resource type "widgets"'),
    ("widgets.apps", 'the server doesn\'t have a resource type "widgets"'),
    ("pods.apps", 'the server doesn\'t have a resource type "pods"'),
    ("deployments.v2.apps", 'the server doesn\'t have a resource type "deployments"'),
    ("pods/log", 'the server doesn\'t have a resource type "pods/log"'),
])
def test_unknown_names_fail_in_kubectls_words(typed: str, message: str) -> None:
    with pytest.raises(CommandError) as e:
        resolve(MAPPER, typed)
    assert str(e.value) == message


def test_facts_come_from_the_document() -> None:
    pods = resolve(MAPPER, "po")
    assert pods.kind == "Pod" and pods.namespaced and pods.short_names == ("po",)
    assert pods.subresources == ("status", "log") and pods.has_status and pods.verbs == ("get", "list")
    nodes = resolve(MAPPER, "no")
    assert not nodes.namespaced and nodes.base_path("ns") == "/api/v1/nodes"
    assert resolve(MAPPER, "ct").base_path("x") == "/apis/stable.example.com/v1/namespaces/x/crontabs"
    preferred = [(r.group, r.version) for r in MAPPER.preferred() if r.plural == "crontabs"]
    assert preferred == [("stable.example.com", "v1")]


def test_targets_and_categories() -> None:
    typed = split_targets(["po,deploy", "a", "b"])
    assert [(i.qualified, names) for i, names in resolve_targets(MAPPER, typed)] == \
        [("pods", ["a", "b"]), ("deployments.apps", ["a", "b"])]
    everything = resolve_targets(MAPPER, split_targets(["all"]))
    assert [i.qualified for i, _ in everything] == ["pods", "deployments.apps", "crontabs.stable.example.com"]


@pytest.mark.parametrize(("api_version", "kind", "plural"), [
    ("v1", "Pod", "pods"),
    ("apps/v1", "Deployment", "deployments"),
    ("stable.example.com/v1beta1", "CronTab", "crontabs"),
])
def test_manifest_kinds_map(api_version: str, kind: str, plural: str) -> None:
    m = Manifest(body={"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}, source="f.yaml", line=1)
    info = info_for_manifest(MAPPER, m)
    assert (info.api_version, info.plural) == (api_version, plural)


@pytest.mark.parametrize(("api_version", "kind"), [("v1", "Gizmo"), ("apps/v2", "Deployment"), ("v1", "pod")])
def test_unknown_manifest_kinds_fail_in_kubectls_words(api_version: str, kind: str) -> None:
    m = Manifest(body={"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "n"}},
                 source="f.yaml", line=1)
    with pytest.raises(CommandError) as e:
        info_for_manifest(MAPPER, m)
    assert str(e.value) == (f'resource mapping not found for name: "x" namespace: "n" from "f.yaml": '
                            f'no matches for kind "{kind}" in version "{api_version}"\nensure CRDs are installed first')


def test_legacy_resource_list_reads_the_same() -> None:
    doc = {"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
        {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
         "verbs": ["get", "list"], "shortNames": ["deploy"], "categories": ["all"]},
        {"name": "deployments/status", "singularName": "", "namespaced": True, "kind": "Deployment", "verbs": ["get"]},
        {"name": "deployments/scale", "singularName": "", "namespaced": True, "kind": "Scale", "verbs": ["get"],
         "group": "autoscaling", "version": "v1"},
    ]}
    assert resources_from_resource_list(doc) == [resolve(MAPPER, "deploy")]
