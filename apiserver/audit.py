"""The audit log: one `audit.k8s.io/v1` Event per request, as JSON lines, at level Metadata.

Each line records who (`user.username`, `user.groups`), what (`verb`, `objectRef` with
resource, namespace, name, apiGroup, apiVersion, subresource), from where (`sourceIPs`,
`userAgent`) and the outcome (`responseStatus.code`), with the request's receive and
completion times. Level Metadata means no request or response bodies are ever written, and
no header is copied, so bearer tokens and Secret data cannot reach the file. A long watch is
written once, when it ends (stage ResponseComplete).
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import parse_qs

from apiserver.authn import UserInfo

__all__ = ["AuditLog", "request_attributes"]

logger = logging.getLogger(__name__)


def _micro(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def request_attributes(method: str, path: str, query: str) -> tuple[str, dict[str, str] | None]:
    """The Kubernetes verb and objectRef of a request path (None for non-resource paths)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return method.lower(), None
    if not rest:
        return method.lower(), None
    ref: dict[str, str] = {"apiGroup": group, "apiVersion": version} if group else {"apiVersion": version}
    if rest[0] == "namespaces" and len(rest) >= 3:
        ref["namespace"], rest = rest[1], rest[2:]
    ref["resource"] = rest[0]
    if len(rest) > 1:
        ref["name"] = rest[1]
    if len(rest) > 2:
        ref["subresource"] = rest[2]
    named = "name" in ref
    watch = parse_qs(query).get("watch", [""])[0] in ("true", "1")
    if method == "GET":
        verb = "watch" if watch else ("get" if named else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if named else "deletecollection"}.get(method, method.lower())
    return verb, ref


class AuditLog:
    """Appends audit events to one file; safe to call from the event loop (short writes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def record(self, *, method: str, path: str, query: str, user: UserInfo | None, code: int,
               source_ip: str | None, user_agent: str | None, received: float, completed: float) -> None:
        verb, ref = request_attributes(method, path, query)
        event: dict[str, Any] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
            "auditID": str(uuid.uuid4()), "stage": "ResponseComplete",
            "requestURI": path + (f"?{query}" if query else ""), "verb": verb,
            "user": {"username": user.name, "groups": list(user.groups)} if user else
                    {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
            "sourceIPs": [source_ip] if source_ip else [],
            "userAgent": user_agent or "",
            "responseStatus": {"metadata": {}, "code": code},
            "requestReceivedTimestamp": _micro(received), "stageTimestamp": _micro(completed),
        }
        if ref is not None:
            event["objectRef"] = ref
        line = json.dumps(event, separators=(",", ":")) + "\n"
        try:
            with self._lock:
                self._file.write(line)
        except OSError as e:  # a full disk must not fail the request
            logger.warning("Writing the audit log failed", extra={"error": str(e)})

    def close(self) -> None:
        self._file.close()


def header(scope: Mapping[str, Any], name: bytes) -> str | None:
    for k, v in scope.get("headers") or []:
        if k.lower() == name:
            return str(v.decode("latin-1"))
    return None
