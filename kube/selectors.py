"""Label and field selectors: parsing the query-string syntax and matching objects.

Shared by the API server (filtering lists and watches) and the clients (informers, pkctl),
so both sides agree on one grammar. Mirrors apimachinery's labels.Parse and fields.Parse:

    labels:  k=v  k==v  k!=v  k in (a,b)  k notin (a,b)  k  !k     (comma = AND)
    fields:  f=v  f==v  f!=v                                        (comma = AND)

Parsing raises ValueError with a message fit for a 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "format_label_selector",
    "parse_field_selector",
    "parse_label_selector",
    "selector_from_label_selector",
]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s+(?P<op>in|notin)\s+\((?P<values>[^)]*)\)\s*$")
_EQ_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>{_VALUE})\s*$")
_EXISTS_RE = re.compile(rf"^\s*(?P<neg>!?)\s*(?P<key>{_KEY})\s*$")


@dataclass(frozen=True)
class Requirement:
    """One clause: key, operator (In, NotIn, Exists, DoesNotExist) and values."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.operator == "In":
            return has and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not has or labels[self.key] not in self.values
        if self.operator == "Exists":
            return has
        if self.operator == "DoesNotExist":
            return not has
        raise ValueError(f"unknown operator {self.operator!r}")


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of requirements; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse `app=web,tier in (a,b),!legacy`; raise ValueError on bad syntax."""
    if not text or not text.strip():
        return LabelSelector()
    reqs: list[Requirement] = []
    for clause in _split_top_level(text):
        if m := _SET_RE.match(clause):
            values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
            reqs.append(Requirement(m["key"], "In" if m["op"] == "in" else "NotIn", values))
        elif m := _EQ_RE.match(clause):
            op = "NotIn" if m["op"] == "!=" else "In"
            reqs.append(Requirement(m["key"], op, frozenset([m["value"] or ""])))
        elif m := _EXISTS_RE.match(clause):
            reqs.append(Requirement(m["key"], "DoesNotExist" if m["neg"] else "Exists"))
        else:
            raise ValueError(f"unable to parse requirement: {clause.strip()!r}")
    return LabelSelector(tuple(reqs))


def selector_from_label_selector(sel: Mapping[str, Any] | None) -> LabelSelector:
    """Turn a metav1.LabelSelector dict (matchLabels / matchExpressions) into a selector.

    A None selector matches nothing in Kubernetes' controllers; callers decide that case.
    """
    reqs: list[Requirement] = []
    for key, value in sorted(((sel or {}).get("matchLabels") or {}).items()):
        reqs.append(Requirement(key, "In", frozenset([value])))
    for expr in (sel or {}).get("matchExpressions") or []:
        op = expr.get("operator")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(f"{op!r} is not a valid label selector operator")
        reqs.append(Requirement(expr["key"], op, frozenset(expr.get("values") or [])))
    return LabelSelector(tuple(reqs))


def format_label_selector(sel: LabelSelector) -> str:
    """The query-string form of a selector (inverse of parse_label_selector)."""
    out = []
    for r in sel.requirements:
        if r.operator == "In" and len(r.values) == 1:
            out.append(f"{r.key}={next(iter(r.values))}")
        elif r.operator == "NotIn" and len(r.values) == 1:
            out.append(f"{r.key}!={next(iter(r.values))}")
        elif r.operator in ("In", "NotIn"):
            out.append(f"{r.key} {r.operator.lower()} ({','.join(sorted(r.values))})")
        elif r.operator == "Exists":
            out.append(r.key)
        else:
            out.append(f"!{r.key}")
    return ",".join(out)


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    negate: bool


@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of `field=value` / `field!=value` terms."""

    requirements: tuple[FieldRequirement, ...] = ()

    def fields(self) -> set[str]:
        return {r.field for r in self.requirements}

    def matches(self, get: Callable[[str], str]) -> bool:
        """`get(field)` returns the object's value for a field path (empty string when unset)."""
        return all((get(r.field) == r.value) != r.negate for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse `spec.nodeName=node-1,status.phase!=Failed`; raise ValueError on bad syntax."""
    if not text or not text.strip():
        return FieldSelector()
    reqs = []
    for clause in text.split(","):
        clause = clause.strip()
        if not clause:
            continue
        for op in ("!=", "==", "="):
            if op in clause:
                field, _, value = clause.partition(op)
                if not field.strip():
                    raise ValueError(f"invalid field selector: {clause!r}")
                reqs.append(FieldRequirement(field.strip(), value.strip(), op == "!="))
                break
        else:
            raise ValueError(f"invalid field selector: {clause!r}: no operator")
    return FieldSelector(tuple(reqs))
