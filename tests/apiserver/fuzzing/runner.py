"""The fuzzing loop: N seeded requests, sequentially, each checked as it is answered.

Properties checked per request:
- no answer is a 5xx (also none inside a watch stream, as an ERROR event);
- every 4xx is a metav1.Status whose code is the HTTP status;
- a rejected write, or a dry run, stores nothing (see `oracle.EtcdHistory`).
Findings are collected, not raised, so one run reports every kind of failure it met; the
`Report` counts requests per verb, 2xx, 4xx and 5xx for the summary line.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.apiserver.fuzzing.builder import FuzzRequest, RequestBuilder, Tracker
from tests.apiserver.fuzzing.catalog import Catalog, Family
from tests.apiserver.fuzzing.draw import draw_operation, draw_request
from tests.apiserver.fuzzing.oracle import EtcdHistory

__all__ = ["FuzzConfig", "Fuzzer", "Report"]

_WRITES = ("POST", "PUT", "PATCH", "DELETE")
_ROOTS = {"core/v1/bindings": "pods"}
"""Families whose objects live under another resource's keys (a Binding writes its pod)."""
_WATCH_QUIET = 0.1
"""Seconds of silence after which a brief watch is closed."""


def _kubelet_unreachable(req: FuzzRequest, status: int) -> bool:
    """pods/log reads from the pod's kubelet: none runs here, and upstream answers 503 when it cannot
    reach one (as for exec, attach and proxy, which the catalog leaves out)."""
    return req.op.subresource == "log" and status == 503


@dataclass(frozen=True)
class FuzzConfig:
    requests: int
    seed: int
    include_bounded: bool
    """Also send inputs only bounded decoding answers well (deep nesting, surrogates, NaN, ranges)."""
    namespaces: tuple[str, ...]
    roots: dict[str, str]
    """Family key -> the etcd key segment under which its objects live (plural, or group/plural)."""


@dataclass
class Report:
    per_verb: Counter[str] = field(default_factory=Counter)
    per_class: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    """Writes answered 2xx, per family: shows every resource got past validation at least once."""
    findings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self, seed: int) -> str:
        verbs = ", ".join(f"{verb} {n}" for verb, n in sorted(self.per_verb.items()))
        total = sum(self.per_verb.values())
        return (f"fuzz seed={seed}: {total} requests in {self.seconds:.0f}s; 2xx {self.per_class['2xx']}, "
                f"4xx {self.per_class['4xx']}, 5xx {self.per_class['5xx']} (pods/log 503 with no kubelet to read from: "
                f"{self.per_class['503 no kubelet']}), findings {len(self.findings)}; "
                f"per verb: {verbs}")


class Fuzzer:
    def __init__(self, *, config: FuzzConfig, catalog: Catalog, api: httpx.Client, etcd: EtcdHistory) -> None:
        self.config, self.catalog, self.api, self.etcd = config, catalog, api, etcd
        self.rnd = random.Random(config.seed)
        self.tracker = Tracker()
        self.builder = RequestBuilder(rnd=self.rnd, definitions=catalog.definitions,
                                      namespaces=list(config.namespaces), include_bounded=config.include_bounded,
                                      client=api, tracker=self.tracker)
        self.report = Report()

    def run(self) -> Report:
        start = time.monotonic()
        for index in range(self.config.requests):
            family, op = draw_operation(self.catalog, self.rnd)
            self.step(index, draw_request(self.builder, family, op))
        self.report.seconds = time.monotonic() - start
        return self.report

    def step(self, index: int, req: FuzzRequest) -> None:
        before = self.etcd.revision() if req.method in _WRITES else None
        status, body = self._watch(req) if req.watch else self._send(req)
        self.report.per_verb[req.label] += 1
        no_kubelet = _kubelet_unreachable(req, status)
        self.report.per_class["503 no kubelet" if no_kubelet else f"{status // 100}xx"] += 1
        if status >= 500 and not no_kubelet:
            self._finding(index, req, f"answered {status}: {body!r:.800}")
        elif status >= 400:
            self._check_status(index, req, status, body)
        if before is not None and (status >= 400 or (req.dry_run and status < 300)):
            self._check_nothing_stored(index, req, before, status)
        self._track(req, status, body)

    def _send(self, req: FuzzRequest) -> tuple[int, Any]:
        resp = self.api.request(req.method, req.url, params=req.params, headers=req.headers, content=req.content)
        try:
            body: Any = resp.json()
        except ValueError:
            body = resp.text
        return resp.status_code, body

    def _watch(self, req: FuzzRequest) -> tuple[int, Any]:
        """Open the watch, read what arrives until it goes quiet, close it; the worst code seen."""
        timeout = httpx.Timeout(30, read=_WATCH_QUIET)
        worst, last = 200, None
        with self.api.stream(req.method, req.url, params=req.params, headers=req.headers, timeout=timeout) as resp:
            if resp.status_code != 200:
                resp.read()
                try:
                    return resp.status_code, resp.json()
                except ValueError:
                    return resp.status_code, resp.text
            try:
                for count, line in enumerate(resp.iter_lines()):
                    event = json.loads(line) if line.strip() else {}
                    if event.get("type") == "ERROR":
                        worst, last = max(worst, int(event["object"].get("code") or 500)), event
                    if count >= 200:
                        break
            except httpx.ReadTimeout:
                pass
        return worst, last

    def _check_status(self, index: int, req: FuzzRequest, status: int, body: Any) -> None:
        if req.method == "HEAD":
            return
        is_status = isinstance(body, dict) and body.get("kind") == "Status" and body.get("code") == status
        streamed = req.watch and isinstance(body, dict) and body.get("type") == "ERROR"
        if not (is_status or streamed):
            self._finding(index, req, f"{status} without a matching Status: {body!r:.400}")

    def _check_nothing_stored(self, index: int, req: FuzzRequest, before: int, status: int) -> None:
        """No key of the request's resource created, none removed by a collection delete, its object untouched.

        Keys of other resources may change meanwhile: the server's own controllers (a CRD's
        status and finalizer) write while the fuzzer works.
        """
        if self.etcd.revision() == before:
            return
        changes = self.etcd.changes_since(before)
        root = self.etcd.key(self._root(req.family), None, "")
        stored = {k for k in changes.created if k.startswith(root)}
        if req.op.action == "deletecollection":
            stored |= {k for k in changes.deleted if k.startswith(root)}
        if req.name is not None:
            target = self.etcd.key(self._root(req.family),
                                   req.namespace if req.family.namespaced else None, req.name)
            stored |= {target} & (changes.modified | changes.deleted)
        if stored:
            self._finding(index, req, f"answered {status} but stored {sorted(stored)}")

    def _root(self, family: Family) -> str:
        return self.config.roots.get(family.key) or _ROOTS.get(family.key) or family.plural

    def _track(self, req: FuzzRequest, status: int, body: Any) -> None:
        family, op = req.family, req.op
        if req.dry_run:
            return
        if status == 404 and req.name is not None and op.on_item:
            self.tracker.discard(family, req.namespace, req.name)
        if status >= 300:
            if op.action == "list" and status == 200:
                self.builder.queries.remember(body)
            return
        if req.method in _WRITES:
            self.report.accepted[family.key] += 1
        if op.action == "list":
            self.builder.queries.remember(body)
        elif op.action == "post" and not op.on_item and isinstance(body, dict):
            self._created(family, body)
        elif op.action == "delete":
            self.tracker.discard(family, req.namespace, req.name or "")
        elif op.action == "deletecollection":
            for entry in list(self.tracker.live.get(family.key, [])):
                if entry[0] == req.namespace:
                    self.tracker.discard(family, *entry)

    def _created(self, family: Family, body: dict[str, Any]) -> None:
        meta = body.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            self.tracker.add(family, meta.get("namespace") if family.namespaced else None, meta["name"])

    def _finding(self, index: int, req: FuzzRequest, what: str) -> None:
        self.report.findings.append(f"#{index} {req.label} {what}\n    request: {req.describe()}")
