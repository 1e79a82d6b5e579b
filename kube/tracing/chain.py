"""From a trace's spans to its chain of hops: who reacted to what, when, how long, after what wait.

A hop is a span marked `picokube.hop`: a write the API server served, a reconcile, a
scheduling attempt, a pod sync. Its writes (client spans naming a verb) are what it `did`;
its other children (the scheduler's binding, the kubelet's CRI calls, probes, the API
server's watch fan-out) and the API server's timed phase events (authorize, admission,
validation, the etcd write) are its nested `hops`. Pure functions over the collector's span
dicts, shared by `pkctl trace` and the browser view; hops come out in causal order (every hop
after the hop that caused it).

Each hop carries the fields `pkctl trace -o json` promises: `actor`, `action`, `object`
(`kind/namespace/name`), `reactedTo`, `start` (RFC 3339 with microseconds), `durationMs`,
`message` and nested `hops`; and, for the text and the browser view, `offset` and `duration`
(seconds since the trace began, and the hop's own), `wait` (work-queue wait), `delivery`
(commit to informer), `did`, `resourceVersion`, `node`, `reason`, `error`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kube.tracing import attrs

__all__ = ["chain", "hop_line", "object_name", "render_text"]

Span = dict[str, Any]
_ERROR = 2
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def object_name(ref: Any) -> Any:
    """`Kind/namespace/name` as the output names objects: `kind/namespace/name` (kind in lower case)."""
    if not isinstance(ref, str) or "/" not in ref:
        return ref
    kind, _, rest = ref.partition("/")
    return f"{kind.lower()}/{rest}"


def _rfc3339(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _short(ref: Any) -> str:
    """`kind/name` of a `Kind/namespace/name` reference."""
    if not isinstance(ref, str):
        return ""
    parts = ref.split("/")
    return f"{parts[0].lower()}/{parts[-1]}" if len(parts) > 1 else ref


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
    """`{"traceID", "hops": [...], "summary": {...}}` for one trace's spans (any order)."""
    if not spans:
        return {"traceID": None, "hops": [], "summary": {}}
    by_id = {s["spanId"]: s for s in spans}
    t0 = min(s["start"] for s in spans)
    hops = [s for s in spans if s["attributes"].get(attrs.HOP)]
    commits = {(h["attributes"].get(attrs.OBJECT), str(h["attributes"].get(attrs.RESOURCE_VERSION))): h
               for h in hops if h["attributes"].get(attrs.ACTOR) == attrs.APISERVER}
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
            verb = str(s["attributes"][attrs.VERB])
            writes[s["spanId"]] = {"verb": verb, "what": s["name"].split(" ", 1)[-1],
                                   "object": s["attributes"].get(attrs.OBJECT),
                                   "resourceVersion": s["attributes"].get(attrs.RESOURCE_VERSION)}
            hop["did"].append(writes[s["spanId"]])
        else:
            hop["hops"].append(_phase(s["name"], s["start"], s["end"], t0, s["attributes"], s.get("events") or []))
    for h in hops:  # a write answered with a Status (a binding): name what the API server wrote
        w = writes.get(h.get("parentSpanId") or "")
        if w is not None and w["resourceVersion"] is None:
            w["object"] = w["object"] or h["attributes"].get(attrs.OBJECT)
            w["resourceVersion"] = h["attributes"].get(attrs.RESOURCE_VERSION)
    for hop in out.values():
        hop["hops"].sort(key=lambda p: p["offset"])
        hop["action"] = _action(hop)
        for w in hop["did"]:
            w["object"] = object_name(w["object"])
    ordered = _causal(list(out.values()))
    return {"traceID": spans[0]["traceId"], "hops": ordered, "summary": _summary(ordered)}


def _phase(name: str, start: int, end: int, t0: int, attributes: dict[str, Any],
           events: list[dict[str, Any]]) -> dict[str, Any]:
    phase = {"action": name, "start": _rfc3339(start), "durationMs": (end - start) / 1e6,
             "offset": (start - t0) / 1e9, "duration": (end - start) / 1e9,
             "attributes": dict(attributes)}
    if events:
        phase["events"] = [{"name": e["name"], "offset": (e["time"] - t0) / 1e9, "attributes": e["attributes"]}
                           for e in events]
    return phase


def _hop(h: Span, by_id: dict[str, Span], t0: int, commits: dict[tuple[Any, str], Span]) -> dict[str, Any]:
    a = h["attributes"]
    parent = by_id.get(h.get("parentSpanId") or "")
    cause = _hop_of(parent, by_id) if parent is not None else None
    error = h["status"]["message"] if h["status"]["code"] == _ERROR else None
    hop: dict[str, Any] = {
        "spanId": h["spanId"], "cause": cause["spanId"] if cause else None, "service": h["service"],
        "actor": a.get(attrs.ACTOR, h["service"]), "action": "", "object": object_name(a.get(attrs.OBJECT)),
        "reactedTo": None, "start": _rfc3339(h["start"]), "durationMs": (h["end"] - h["start"]) / 1e6,
        "message": a.get(attrs.REASON) or error, "hops": [],
        "name": h["name"], "offset": (h["start"] - t0) / 1e9, "duration": (h["end"] - h["start"]) / 1e9,
        "wait": a.get(attrs.QUEUED), "delivery": None, "resourceVersion": a.get(attrs.RESOURCE_VERSION),
        "did": [], "node": a.get(attrs.NODE), "error": error, "reason": a.get(attrs.REASON),
        "phase": a.get("k8s.pod.phase"), "subresource": a.get(attrs.SUBRESOURCE) or None,
        "requestName": a.get(attrs.NAME) or None,
    }
    if a.get(attrs.ACTOR) == attrs.APISERVER:
        by = cause["attributes"].get(attrs.ACTOR) if cause else a.get(attrs.USER)
        hop["reactedTo"] = {"request": h["name"], "by": by}
        for e in h.get("events") or []:  # authorize, admission, validation, the etcd write
            seconds = float(e["attributes"].get("seconds") or 0.0)
            details = {k: v for k, v in e["attributes"].items() if k != "seconds"}
            hop["hops"].append(_phase(e["name"], e["time"], e["time"] + int(seconds * 1e9), t0, details, []))
    elif a.get(attrs.REACTED_OBJECT):
        rv = str(a.get(attrs.REACTED_RV))
        hop["reactedTo"] = {"event": a.get(attrs.REACTED_EVENT), "object": object_name(a.get(attrs.REACTED_OBJECT)),
                            "resourceVersion": rv}
        commit = commits.get((a.get(attrs.REACTED_OBJECT), rv))
        if commit is not None and a.get(attrs.DELIVERED):
            hop["delivery"] = max(0.0, float(a[attrs.DELIVERED]) - commit["end"] / 1e9)
    elif cause is not None:
        hop["reactedTo"] = {"retry": True}
    return hop


def _action(hop: dict[str, Any]) -> str:
    """What a hop did, in a few words: `create pods/web-abc`, `bind web-abc to node-2`, ..."""
    if hop["actor"] == attrs.APISERVER:
        verb, _, resource = hop["name"].partition(" ")
        plural = resource.split("/")[0]
        name = str(hop["object"] or "").rsplit("/", 1)[-1] or hop.get("requestName") or ""
        sub = f"/{hop['subresource']}" if hop.get("subresource") else ""
        return f"{verb} {plural}/{name}{sub}"
    if hop["node"] and not hop["reason"]:
        return f"bind {str(hop['object'] or '').rsplit('/', 1)[-1]} to {hop['node']}"
    if hop["did"]:
        return "; ".join(f"{_VERBS.get(d['verb'], d['verb'].lower())} {_short(d['object']) or d['what']}"
                         for d in hop["did"])
    if hop["hops"]:
        return ", ".join(dict.fromkeys(p["action"] for p in hop["hops"]))
    return (hop["reason"] and "could not act") or hop["name"]


def _causal(hops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hops by start time, each moved after its cause if clocks disagree."""
    placed: list[dict[str, Any]] = []
    done: set[str] = set()
    pending = sorted(hops, key=lambda h: h["offset"])
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
    end = max(h["offset"] + h["duration"] for h in hops)
    running = [h["offset"] + h["duration"] for h in hops if h.get("phase") == "Running"]
    slowest = max(hops, key=lambda h: h["duration"] + (h["wait"] or 0))
    stuck = [h for h in hops if h["reason"]]
    last_ok: dict[tuple[Any, Any], float] = {}  # when each actor last finished a hop on each object
    for h in hops:
        if not h["error"] and not h["reason"]:
            key = (h["actor"], h["object"])
            last_ok[key] = max(last_ok.get(key, -1.0), h["offset"] + h["duration"])
    waiting = [{"actor": h["actor"], "object": h["object"], "reason": h["reason"]} for h in stuck
               if last_ok.get((h["actor"], h["object"]), -1.0) < h["offset"]]
    return {"hops": len(hops), "span": end, "toRunning": max(running) if running else None,
            "slowest": {"actor": slowest["actor"], "action": slowest["action"], "duration": slowest["duration"],
                        "wait": slowest["wait"]}, "waitingOn": waiting}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}ms"


def hop_line(hop: dict[str, Any]) -> list[str]:
    """One hop as text: its line, then its phases indented."""
    r = hop["reactedTo"] or {}
    if "request" in r:
        reacted = f"request from {r.get('by')}"
    elif "event" in r:
        reacted = f"{r['event']} {r['object']} rv={r['resourceVersion']}"
    else:
        reacted = "retry" if r.get("retry") else "-"
    if hop["actor"] == attrs.APISERVER:
        did = f"{hop['action']} -> " + (f"rv={hop['resourceVersion']}" if hop["resourceVersion"] else "failed")
    else:
        did = "; ".join(f"{_VERBS.get(d['verb'], d['verb'])} {d['object'] or d['what']} -> "
                        + (f"rv={d['resourceVersion']}" if d["resourceVersion"] else "failed")
                        for d in hop["did"]) or hop["action"]
    line = (f"+{hop['offset'] * 1000:8.1f}ms  {hop['actor']:<24} {reacted:<55} {did}  "
            f"took {_ms(hop['duration'])} waited {_ms(hop['wait'])}")
    if hop["delivery"] is not None:
        line += f" (watch {_ms(hop['delivery'])})"
    lines = [line]
    if hop["node"] and not hop["reason"] and hop["actor"] != attrs.APISERVER:
        lines.append(f"{'':14}  chose {hop['node']}")
    if hop["reason"]:
        lines.append(f"{'':14}  {hop['actor']}: {hop['reason']}")
    elif hop["error"]:
        lines.append(f"{'':14}  failed: {hop['error']}")
    lines += [f"{'':14}  {p['action']} {_ms(p['duration'])}" for p in hop["hops"]
              if hop["actor"] != attrs.APISERVER]
    return lines


def render_text(view: dict[str, Any]) -> str:
    """The whole chain as `pkctl trace` prints it."""
    lines = [f"trace {view['traceID']}"]
    for hop in view["hops"]:
        lines += hop_line(hop)
    s = view["summary"]
    if s:
        lines.append(f"{s['hops']} hops in {_ms(s['span'])}; to Running: {_ms(s['toRunning'])}; slowest: "
                     f"{s['slowest']['actor']} {s['slowest']['action']} {_ms(s['slowest']['duration'])}")
        for w in s["waitingOn"]:
            lines.append(f"waiting on {w['actor']} for {w['object']}: {w['reason']}")
    return "\n".join(lines) + "\n"
