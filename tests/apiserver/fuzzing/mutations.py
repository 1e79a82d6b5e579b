"""Ways to make a valid-ish object wrong, one random step at a time.

Each mutation picks a place in the document and breaks it the way a careless or hostile client
would: a wrong JSON type, a missing (possibly required) field, a huge, negative or fractional
number, an odd string, an unknown field, another kind's apiVersion/kind, metadata the server
owns, a list entry duplicated. `Mutator(include_bounded=True)` also produces the inputs that only
bounded decoding can answer (deep nesting, lone surrogates, NaN and infinities, integers beyond
int64, quantities out of range): `bounded_inputs` names them so a run can leave them out while
the server cannot yet take them (the switch of `runner.FuzzConfig`).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from typing import Any

__all__ = ["ODD_STRINGS", "Mutator", "deep_marker", "expand_deep", "paths"]

_DEEP = "fuzz-deep-nesting:"

Path = tuple[str | int, ...]

ODD_STRINGS = ["", " ", "UPPER", "a_b", "-a", "a.", "a..b", "ä", "💥", "\x00", "a\nb", "../x", "%2F", "${x}", "true",
               "null", "1e3", "0x10", "-0", "1.5", "100m", "-1", "a" * 64, "a" * 254, "a" * 5000, "*", "a/b", "a:b",
               "\t", "\u202e", "<script>", "'; --", "\\", "\"", "{}", "[]", "10.0.0.300", "::1", "01", "Always"]
_NUMBERS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**53, 2**63 - 1, -(2**63), 1.5, -0.5, 1e300, 1e-300]
_API_VERSIONS = ["v1", "v2", "", "apps/v1", "apps/v1beta1", "batch/v1", "example.com/v1", "/", "v1/", "a/b/c"]
_KINDS = ["Pod", "ConfigMap", "Deployment", "Status", "List", "", "pod", "Unknown", "DeleteOptions", "Scale"]
_SERVER_OWNED: dict[str, list[Any]] = {
    "resourceVersion": ["abc", "-1", "0", "999999999", "1.5", ""], "uid": ["not-a-uid", "", "x" * 100],
    "generation": [-5, 10**6, "1"], "creationTimestamp": ["yesterday", "2024-13-45T99:99:99Z", 0],
    "deletionTimestamp": ["2024-01-02T03:04:05Z", "garbage"], "deletionGracePeriodSeconds": [-1, 30],
    "finalizers": [["a/b"], ["UPPER/x"], [""], ["kubernetes"], ["example.com/x", "example.com/x"], "x"],
    "ownerReferences": [[{}], [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}],
                        [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}] * 2],
    "managedFields": [[{}], [{"manager": "m", "operation": "Bogus"}], "x", [{"fieldsType": "FieldsV2"}]],
    "labels": [{"a b": "c"}, {"x": "y" * 64}, {"": ""}, {"k": 1}, {"example.com/": "v"}, {"k": None}],
    "annotations": [{"a b": "c"}, {"k": 1}, {"k": "v" * 300000}],
    "generateName": ["UPPER-", "x" * 300, "", "a-"], "namespace": ["other", "UPPER", ""],
    "name": ["UPPER", "a..b", "x" * 300, "", "-a", ".", ".."], "selfLink": ["/x"],
}


def paths(obj: Any, prefix: Path = ()) -> list[Path]:
    """Every place in a JSON document, the document itself first."""
    out: list[Path] = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.extend(paths(value, (*prefix, key)))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            out.extend(paths(value, (*prefix, index)))
    return out


def _parent(doc: Any, path: Path) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


def _set(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    _parent(doc, path)[path[-1]] = value
    return doc


class Mutator:
    """Random mutations of JSON documents, drawn from one random stream."""

    def __init__(self, rnd: random.Random, *, include_bounded: bool) -> None:
        self.rnd, self.include_bounded = rnd, include_bounded
        self._ops: list[Callable[[Any], Any]] = [
            self.wrong_type, self.drop, self.number, self.odd_string, self.unknown_field, self.wrong_type_meta,
            self.server_owned, self.duplicate_entry, self.empty_container, self.drop, self.odd_string, self.number]
        if include_bounded:
            self._ops += [self.bounded_input]

    def mutate(self, doc: Any, *, steps: int = 1) -> Any:
        """A broken deep copy of `doc` (steps mutations applied one after another)."""
        out = copy.deepcopy(doc)
        for _ in range(steps):
            out = self.rnd.choice(self._ops)(out)
        return out

    def _place(self, doc: Any, *, leaf: bool = False) -> Path:
        candidates = paths(doc)
        if leaf:
            candidates = [p for p in candidates if p] or candidates
        return self.rnd.choice(candidates)

    def wrong_type(self, doc: Any) -> Any:
        value: Any = self.rnd.choice([None, True, 0, -7, 1.5, "str", "", [], [1, "a"], {}, {"a": {"b": []}}])
        return _set(doc, self._place(doc, leaf=True), value)

    def drop(self, doc: Any) -> Any:
        path = self._place(doc, leaf=True)
        if path:
            del _parent(doc, path)[path[-1]]
        return doc

    def number(self, doc: Any) -> Any:
        ints = [p for p in paths(doc) if p and isinstance(_get(doc, p), int | float) and not isinstance(
            _get(doc, p), bool)]
        path = self.rnd.choice(ints) if ints and self.rnd.random() < 0.8 else self._place(doc, leaf=True)
        return _set(doc, path, self.rnd.choice(_NUMBERS))

    def odd_string(self, doc: Any) -> Any:
        strings = [p for p in paths(doc) if p and isinstance(_get(doc, p), str)]
        path = self.rnd.choice(strings) if strings and self.rnd.random() < 0.8 else self._place(doc, leaf=True)
        return _set(doc, path, self.rnd.choice(ODD_STRINGS))

    def unknown_field(self, doc: Any) -> Any:
        dicts = [p for p in paths(doc) if isinstance(_get(doc, p), dict)]
        if dicts:
            _get(doc, self.rnd.choice(dicts))[self.rnd.choice(["fuzzUnknown", "Spec", "$patch", "", "status"])] = \
                self.rnd.choice([1, "x", {"y": [1]}, None])
        return doc

    def wrong_type_meta(self, doc: Any) -> Any:
        if isinstance(doc, dict):
            if self.rnd.random() < 0.5:
                doc["apiVersion"] = self.rnd.choice(_API_VERSIONS)
            else:
                doc["kind"] = self.rnd.choice(_KINDS)
        return doc

    def server_owned(self, doc: Any) -> Any:
        if isinstance(doc, dict):
            meta = doc.setdefault("metadata", {})
            if isinstance(meta, dict):
                field = self.rnd.choice(sorted(_SERVER_OWNED))
                meta[field] = copy.deepcopy(self.rnd.choice(_SERVER_OWNED[field]))
        return doc

    def duplicate_entry(self, doc: Any) -> Any:
        lists = [p for p in paths(doc) if isinstance(_get(doc, p), list) and _get(doc, p)]
        if lists:
            target = _get(doc, self.rnd.choice(lists))
            target.append(copy.deepcopy(target[0]))
        return doc

    def empty_container(self, doc: Any) -> Any:
        containers = [p for p in paths(doc) if p and isinstance(_get(doc, p), dict | list)]
        if containers:
            path = self.rnd.choice(containers)
            _set(doc, path, type(_get(doc, path))())
        return doc

    def bounded_input(self, doc: Any) -> Any:
        """An input only bounded decoding answers well (left out unless `include_bounded`)."""
        value = self.rnd.choice([deep_marker(self.rnd.choice([200, 1000, 5000])), "\ud800", "a\udfffb",
                                 float("nan"), float("inf"), 2**64, -(2**70), 10**30, "1e400",
                                 "99999999999999999999999999Ei", "-1e309"])
        return _set(doc, self._place(doc, leaf=True), value)


def deep_marker(depth: int) -> str:
    """A placeholder that `expand_deep` turns into `depth` nested arrays once the document is text
    (Python's own encoders would run out of stack building it)."""
    return f"{_DEEP}{depth}"


def expand_deep(text: str) -> str:
    """Replace every quoted `deep_marker` in a JSON or YAML text by its nested arrays."""
    def nested(match: re.Match[str]) -> str:
        depth = int(match.group(1))
        return "[" * depth + "1" + "]" * depth
    return re.sub(r"[\"']" + re.escape(_DEEP) + r"(\d+)[\"']", nested, text)


def _get(doc: Any, path: Path) -> Any:
    for step in path:
        doc = doc[step]
    return doc
