"""The fuzzer over every served resource and verb, generated from the server's own /openapi/v2.

One seeded run of PICOKUBE_FUZZ_REQUESTS requests (10,000 in CI, 2,000 elsewhere; the seed is
PICOKUBE_FUZZ_SEED) against a real API server on the session's etcd: creates, gets, lists with
random query parameters, updates, patches of every type, deletes, collection deletes, brief
watches and the status, scale and other subresources, with bodies built from the schema and
mutated (see tests/apiserver/fuzzing/). Properties: no 5xx; every 4xx a Status; nothing stored
by a rejected request or a dry run. The summary line (requests per verb, 4xx, 5xx) is printed
whatever the outcome.

PICOKUBE_FUZZ_WITHOUT_BOUNDED_INPUTS=1 leaves out the inputs that only bounded decoding answers
well (deep nesting, lone surrogates, NaN, out-of-range numbers and quantities, malformed or
out-of-range limit/resourceVersion/continue/timeoutSeconds). Off by default: the full fuzzer runs.
"""

from __future__ import annotations

import os
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from tests.apiserver.fuzzing.catalog import Catalog, load_catalog
from tests.apiserver.fuzzing.oracle import EtcdHistory
from tests.apiserver.fuzzing.runner import FuzzConfig, Fuzzer

pytestmark = pytest.mark.timeout(900)

_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
REQUESTS = int(os.environ.get("PICOKUBE_FUZZ_REQUESTS") or (10_000 if _CI else 2_000))
SEED = int(os.environ.get("PICOKUBE_FUZZ_SEED") or 23)
WITHOUT_BOUNDED = os.environ.get("PICOKUBE_FUZZ_WITHOUT_BOUNDED_INPUTS", "") not in ("", "0")
CRD_GROUP = "fuzz.example.com"


@pytest.fixture(scope="module")
def fuzz_api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    """A server of the fuzzer's own whose etcd history stays readable (no compaction) for the oracle."""
    with ApiServerHarness(tmp_path_factory.mktemp("fuzz-apiserver"), etcd_endpoint=etcd_endpoint,
                          extra_args=["--etcd-compaction-interval", "0"]) as harness:
        yield harness


@pytest.fixture(scope="module")
def client(fuzz_api: ApiServerHarness) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fuzz_api.server, verify=ssl.create_default_context(cafile=str(fuzz_api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {fuzz_api.token('admin')}"}, timeout=30) as c:
        yield c


def _serve_custom_resource(client: httpx.Client) -> None:
    """One CRD served before the catalog is read, so custom resources are fuzzed too."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0, "maximum": 10}, "mode": {"type": "string", "enum": ["a", "b"]}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{CRD_GROUP}"},
           "spec": {"group": CRD_GROUP, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema},
                                  "subresources": {"status": {}, "scale": {
                                      "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}}}]}}
    assert client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    eventually_sync(lambda: client.get(f"/apis/{CRD_GROUP}/v1/namespaces/default/gadgets").status_code == 200,
               timeout=20)
    eventually_sync(lambda: f"/apis/{CRD_GROUP}/v1/namespaces/{{namespace}}/gadgets" in
               client.get("/openapi/v2").json()["paths"], timeout=20)


@pytest.fixture(scope="module")
def catalog(client: httpx.Client) -> Catalog:
    _serve_custom_resource(client)
    return load_catalog(client.get("/openapi/v2").json())


def test_catalog_covers_every_served_resource(client: httpx.Client, catalog: Catalog) -> None:
    """The fuzzer's view of the server is its discovery: every resource discovery lists is fuzzed."""
    discovered: set[str] = set()
    groups = [("", "/api/v1")] + [(g["name"], f"/apis/{g['preferredVersion']['groupVersion']}")
                                  for g in client.get("/apis").json()["groups"]]
    for group, path in groups:
        for resource in client.get(path).json()["resources"]:
            if "/" not in resource["name"] and resource.get("verbs"):
                version = path.rsplit("/", 1)[-1]
                discovered.add(f"{group or 'core'}/{version}/{resource['name']}")
    assert discovered <= set(catalog.families), sorted(discovered - set(catalog.families))
    assert f"{CRD_GROUP}/v1/gadgets" in catalog.families


def test_fuzz_every_resource_and_verb(fuzz_api: ApiServerHarness, client: httpx.Client, catalog: Catalog,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    namespaces = tuple(f"fuzz-{uuid.uuid4().hex[:6]}" for _ in range(2))
    for name in namespaces:
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    roots = {key: f"{family.group}/{family.plural}" for key, family in catalog.families.items()
             if family.group == CRD_GROUP}
    config = FuzzConfig(requests=REQUESTS, seed=SEED, include_bounded=not WITHOUT_BOUNDED, namespaces=namespaces,
                        roots=roots)
    with httpx.Client(base_url=fuzz_api.etcd_endpoint, timeout=30) as etcd_client:
        report = Fuzzer(config=config, catalog=catalog, api=client,
                        etcd=EtcdHistory(etcd_client, fuzz_api.prefix)).run()
    with capsys.disabled():
        print(f"\n{report.summary(SEED)}")
    _write_summary(report.summary(SEED))
    assert not report.findings, f"{len(report.findings)} findings:\n" + "\n".join(report.findings[:25])
    assert report.per_class["5xx"] == 0
    writable = {key for key, family in catalog.families.items()
                if any(op.action == "post" and not op.on_item for op in family.operations)}
    if REQUESTS >= 2_000:
        # Every resource that takes creates got past validation at least once, so its update,
        # patch and delete paths were exercised on objects that exist.
        assert writable <= set(report.accepted), sorted(writable - set(report.accepted))
    assert client.get("/readyz").status_code == 200


def _write_summary(line: str) -> None:
    """Also keep the summary where CI's log collection can find it, when asked (PICOKUBE_FUZZ_SUMMARY)."""
    path = os.environ.get("PICOKUBE_FUZZ_SUMMARY")
    if path:
        Path(path).write_text(line + "\n")
