"""From a trace's spans to its chain of hops: who reacted to what, when, how long, after what wait.

A hop is a span marked `picokube.hop`: a write the API server served, a reconcile, a
scheduling attempt, a pod sync. Its writes (client spans naming a verb) and its other
children (the scheduler's binding, the kubelet's CRI calls, probes) hang under it as
details. Pure functions over the collector's span dicts, shared by `pkctl trace` and the
browser view; hops come out in causal order (every hop after the hop that caused it).
"""

from __future__ import annotations

from typing import Any

from kube.tracing import attrs

__all__ = ["chain", "hop_line", "is_quiet", "render_text"]

Span = dict[str, Any]
_ERROR = 2


def _hop_of(span: Span, by_id: dict[str, Span]) -> Span | None:
    """The nearest hop at or above `span`."""
    seen = 0
    current: Span | None = span
    while current is not None and seen < 1000:
        if current["attributes"].get(attrs.HOP):
            return current
        current = by_id.get(current.get("parentSpanId") or "")
        seen += 1
    return None


def chain(spans: list[Span]) -> dict[str, Any]:
    """`{"traceId", "hops": [...], "summary": {...}}` for one trace's spans (any order)."""
    if not spans:
        return {"traceId": None, "hops": [], "summary": {}}
    by_id = {s["spanId"]: s for s in spans}
    t0 = min(s["start"] for s in spans)
    hops = [s for s in spans if s["attributes"].get(attrs.HOP)]
    commits = {(h["attributes"].get(attrs.OBJECT), str(h["attributes"].get(attrs.RESOURCE_VERSION))): h
               for h in hops if h["attributes"].get(attrs.ACTOR) == "apiserver"}
    out: dict[str, dict[str, Any]] = {}
    writes: dict[str, dict[str, Any]] = {}
    for h in sorted(hops, key=lambda s: s["start"]):
        out[h["spanId"]] = _hop(h, by_id, t0, commits)
    for s in sorted(spans, key=lambda s: s["start"]):
        if s["attributes"].get(attrs.HOP):
            continue
        parent = by_id.get(s.get("parentSpanId") or "")
        owner = _hop_of(parent, by_id) if parent is not None else None
        if owner is None or owner["spanId"] not in out:
            continue
        hop = out[owner["spanId"]]
        if s["attributes"].get(attrs.VERB):
            writes[s["spanId"]] = {"verb": s["attributes"][attrs.VERB], "what": s["name"].split(" ", 1)[-1],
                                   "object": s["attributes"].get(attrs.OBJECT),
                                   "resourceVersion": s["attributes"].get(attrs.RESOURCE_VERSION)}
            hop["did"].append(writes[s["spanId"]])
        else:
            hop["details"].append({"name": s["name"], "start": (s["start"] - t0) / 1e9,
                                   "duration": (s["end"] - s["start"]) / 1e9,
                                   "attributes": {k: v for k, v in s["attributes"].items()}})
    for h in hops:  # a write answered with a Status (a binding): name what the API server wrote
        w = writes.get(h.get("parentSpanId") or "")
        if w is not None and w["resourceVersion"] is None:
            w["object"] = w["object"] or h["attributes"].get(attrs.OBJECT)
            w["resourceVersion"] = h["attributes"].get(attrs.RESOURCE_VERSION)
    ordered = _causal(list(out.values()))
    return {"traceId": spans[0]["traceId"], "hops": ordered, "summary": _summary(ordered)}


def _hop(h: Span, by_id: dict[str, Span], t0: int, commits: dict[tuple[Any, str], Span]) -> dict[str, Any]:
    a = h["attributes"]
    parent = by_id.get(h.get("parentSpanId") or "")
    cause = _hop_of(parent, by_id) if parent is not None else None
    hop: dict[str, Any] = {
        "spanId": h["spanId"], "cause": cause["spanId"] if cause else None, "service": h["service"],
        "actor": a.get(attrs.ACTOR, h["service"]), "name": h["name"], "start": (h["start"] - t0) / 1e9,
        "duration": (h["end"] - h["start"]) / 1e9, "wait": a.get(attrs.QUEUED), "delivery": None,
        "object": a.get(attrs.OBJECT), "resourceVersion": a.get(attrs.RESOURCE_VERSION),
        "reactedTo": None, "did": [], "details": [], "node": a.get(attrs.NODE),
        "error": h["status"]["message"] if h["status"]["code"] == _ERROR else None, "reason": a.get(attrs.REASON),
        "phase": a.get("k8s.pod.phase"),
    }
    if a.get(attrs.ACTOR) == "apiserver":
        by = cause["attributes"].get(attrs.ACTOR) if cause else a.get(attrs.USER)
        hop["reactedTo"] = {"request": h["name"], "by": by}
    elif a.get(attrs.REACTED_OBJECT):
        rv = str(a.get(attrs.REACTED_RV))
        hop["reactedTo"] = {"event": a.get(attrs.REACTED_EVENT), "object": a.get(attrs.REACTED_OBJECT),
                            "resourceVersion": rv}
        commit = commits.get((a.get(attrs.REACTED_OBJECT), rv))
        if commit is not None and a.get(attrs.DELIVERED):
            hop["delivery"] = max(0.0, float(a[attrs.DELIVERED]) - commit["end"] / 1e9)
    elif cause is not None:
        hop["reactedTo"] = {"retry": True}
    return hop


def _causal(hops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hops by start time, each moved after its cause if clocks disagree."""
    placed: list[dict[str, Any]] = []
    done: set[str] = set()
    pending = sorted(hops, key=lambda h: h["start"])
    ids = {h["spanId"] for h in hops}
    while pending:
        for i, h in enumerate(pending):
            if h["cause"] is None or h["cause"] in done or h["cause"] not in ids:
                placed.append(pending.pop(i))
                done.add(h["spanId"])
                break
        else:
            placed.extend(pending)
            break
    return placed


def _summary(hops: list[dict[str, Any]]) -> dict[str, Any]:
    if not hops:
        return {}
    end = max(h["start"] + h["duration"] for h in hops)
    running = [h["start"] + h["duration"] for h in hops if h.get("phase") == "Running"]
    slowest = max(hops, key=lambda h: h["duration"] + (h["wait"] or 0))
    stuck = [h for h in hops if h["reason"]]
    last_ok = {(h["actor"], h["object"]): h["start"] for h in hops if not h["error"]}
    waiting = [{"actor": h["actor"], "object": h["object"], "reason": h["reason"]} for h in stuck
               if last_ok.get((h["actor"], h["object"]), -1.0) < h["start"]]
    return {"hops": len(hops), "span": end, "toRunning": max(running) if running else None,
            "slowest": {"actor": slowest["actor"], "name": slowest["name"], "duration": slowest["duration"],
                        "wait": slowest["wait"]}, "waitingOn": waiting}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}ms"


def hop_line(hop: dict[str, Any]) -> list[str]:
    """One hop as text: its line, then its details indented."""
    r = hop["reactedTo"] or {}
    if "request" in r:
        reacted = f"request from {r.get('by')}"
    elif "event" in r:
        reacted = f"{r['event']} {r['object']} rv={r['resourceVersion']}"
    else:
        reacted = "retry" if r.get("retry") else "-"
    if hop["actor"] == "apiserver":
        did = f"{hop['name']} {hop['object'] or ''} -> rv={hop['resourceVersion']}"
    else:
        did = "; ".join(f"{d['verb']} {d['object'] or d['what']} -> rv={d['resourceVersion']}" for d in hop["did"])
        did = did or "(no write)"
    line = (f"+{hop['start'] * 1000:8.1f}ms  {hop['actor']:<20} {reacted:<55} {did}  "
            f"took {_ms(hop['duration'])} waited {_ms(hop['wait'])}")
    if hop["delivery"] is not None:
        line += f" (watch {_ms(hop['delivery'])})"
    lines = [line]
    if hop["node"] and hop["actor"] == "scheduler":
        lines.append(f"{'':14}  chose {hop['node']}")
    if hop["reason"]:
        lines.append(f"{'':14}  {hop['actor']}: {hop['reason']}")
    lines += [f"{'':14}  {d['name']} {_ms(d['duration'])}" for d in hop["details"]
              if hop["actor"] != "apiserver"]
    return lines


def is_quiet(hop: dict[str, Any]) -> bool:
    """A hop that looked and changed nothing (a garbage collector check, a level-triggered re-check)."""
    return (not hop["did"] and not hop["details"] and not hop["reason"] and not hop["error"]
            and hop["actor"] != "apiserver")


def render_text(view: dict[str, Any], *, everything: bool = False) -> str:
    """The whole chain as `pkctl trace` prints it; hops that changed nothing only with `everything`."""
    lines = [f"trace {view['traceId']}"]
    for hop in view["hops"]:
        if everything or not is_quiet(hop):
            lines += hop_line(hop)
    s = view["summary"]
    if s:
        lines.append(f"{s['hops']} hops in {_ms(s['span'])}; to Running: {_ms(s['toRunning'])}; slowest: "
                     f"{s['slowest']['actor']} {s['slowest']['name']} {_ms(s['slowest']['duration'])}")
        for w in s["waitingOn"]:
            lines.append(f"waiting on {w['actor']} for {w['object']}: {w['reason']}")
    return "\n".join(lines) + "\n"
