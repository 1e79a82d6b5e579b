"""Random values for the query parameters an operation documents.

Values are drawn by parameter name where Kubernetes gives the name a meaning (selectors,
dryRun, propagationPolicy, fieldValidation...), else by the documented type, and are a mix of
good and bad. The ranges of `limit`, `resourceVersion`, `continue` and `timeoutSeconds` are
bounded decoding's to answer: out-of-range or malformed values of those four are drawn only
with `include_bounded`; without it they get well-formed values.
"""

from __future__ import annotations

import random
from typing import Any

from tests.apiserver.fuzzing.mutations import ODD_STRINGS

__all__ = ["QueryMaker"]

_BY_NAME: dict[str, list[Any]] = {
    "labelSelector": ["app=fuzz", "app!=x", "app in (a,b)", "!app", "app", "a b", "=", "app=", "app==x", "x,y",
                      "app notin ()", "((", "app in a", "a=b,c!=d", "example.com/k=v", "k=" + "v" * 70, "UP/x=y"],
    "fieldSelector": ["metadata.name=x", "metadata.namespace!=y", "spec.nodeName=n", "status.phase=Running",
                      "bogus=x", "metadata.name", "a=b=c", "", "spec.unknown=1", "metadata.name==x",
                      "involvedObject.name=p", "type=Opaque", "spec.schedulerName=default-scheduler"],
    "dryRun": ["All", "All", "", "bogus", "all"],
    "propagationPolicy": ["Orphan", "Background", "Foreground", "bogus", ""],
    "fieldValidation": ["Strict", "Warn", "Ignore", "bogus", "", "strict"],
    "fieldManager": ["fuzz", "fuzz", "", "x" * 200, "kubectl", "a b", "\u00e4"],
    "resourceVersionMatch": ["NotOlderThan", "Exact", "", "bogus"],
    "gracePeriodSeconds": [0, 0, 30, -1, "x", 1.5, 2**40],
    "pretty": ["true", "false", "x"],
    "shardSelector": ["", "x", "shardRange(object.metadata.uid, '0x0', '0x8')"],
    "container": ["c", "missing", ""],
    "sinceTime": ["2024-01-02T03:04:05Z", "yesterday"],
    "stream": ["All", "Stdout", "bogus"],
}
_BOOL = ["true", "false", "1", "0", "x", ""]
_INT = [0, 1, 5, -1, "x", ""]
_BOUNDED_RANGES: dict[str, list[Any]] = {
    "limit": [-1, -(2**63), 2**63, 2**70, "abc", "1.5", "", " 1"],
    "resourceVersion": ["abc", "-1", "99999999999999999999999", "1.5", " 1", "0x10"],
    "continue": ["abc", "e30=", "eyJydiI6LTF9", "%%%", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0="],
    "timeoutSeconds": [-1, 2**63, 2**70, "x", "1.5"],
}
_WELL_FORMED: dict[str, list[Any]] = {"limit": [1, 2, 5, 500], "resourceVersion": ["", "0"],
                                       "continue": [], "timeoutSeconds": [1, 2]}


class QueryMaker:
    """Query strings for operations, with the continue tokens servers handed out earlier."""

    def __init__(self, rnd: random.Random, *, include_bounded: bool) -> None:
        self.rnd, self.include_bounded = rnd, include_bounded
        self.continue_tokens: list[str] = []
        self.resource_versions: list[str] = []

    def value(self, name: str, kind: str) -> Any:
        if name in _WELL_FORMED:
            return self._ranged(name)
        if name in _BY_NAME:
            return self.rnd.choice(_BY_NAME[name])
        if kind == "boolean":
            return self.rnd.choice(_BOOL)
        if kind == "integer":
            return self.rnd.choice(_INT)
        return self.rnd.choice(ODD_STRINGS[:24])

    def _ranged(self, name: str) -> Any:
        if self.include_bounded and self.rnd.random() < 0.3:
            return self.rnd.choice(_BOUNDED_RANGES[name])
        good = list(_WELL_FORMED[name])
        if name == "continue":
            good += self.continue_tokens[-20:]
        if name == "resourceVersion":
            good += self.resource_versions[-20:]
        return self.rnd.choice(good) if good else None

    def params(self, query: tuple[tuple[str, str], ...], *, chance: float = 0.3,
               skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """A random subset of the documented parameters with random values (None values dropped)."""
        out: dict[str, Any] = {}
        for name, kind in query:
            if name in skip or self.rnd.random() >= chance:
                continue
            value = self.value(name, kind)
            if value is not None:
                out[name] = value
        return out

    def remember(self, body: Any) -> None:
        """Keep a LIST's continue token and resourceVersion for later requests to reuse."""
        meta = body.get("metadata") if isinstance(body, dict) else None
        if isinstance(meta, dict):
            if isinstance(meta.get("continue"), str) and meta["continue"]:
                self.continue_tokens.append(meta["continue"])
            if isinstance(meta.get("resourceVersion"), str):
                self.resource_versions.append(meta["resourceVersion"])
