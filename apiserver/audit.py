"""The audit log: one `audit.k8s.io/v1` Event per request, as JSON lines, at level Metadata.

Each line records who (`user`: username, uid, groups, extra; and `impersonatedUser`, whom
the request ran as, when it impersonated someone), what (`verb`, `objectRef` with
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
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apiserver.authn import UserInfo, user_info_object
from apiserver.endpoints.request_info import RequestInfo

__all__ = ["AuditLog", "object_ref"]

logger = logging.getLogger(__name__)


def _micro(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def object_ref(info: RequestInfo) -> dict[str, str] | None:
    """The audit objectRef of a resource request (None for non-resource paths)."""
    if not info.is_resource_request:
        return None
    ref: dict[str, str] = {"apiGroup": info.api_group, "apiVersion": info.api_version} if info.api_group else \
        {"apiVersion": info.api_version}
    if info.namespace:
        ref["namespace"] = info.namespace
    ref["resource"] = info.resource
    if info.name:
        ref["name"] = info.name
    if info.subresource:
        ref["subresource"] = info.subresource
    return ref


class AuditLog:
    """Appends audit events to one file; safe to call from the event loop (short writes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def record(self, *, info: RequestInfo, query: str, user: UserInfo | None, code: int,
               source_ip: str | None, user_agent: str | None, received: float, completed: float,
               impersonated_user: UserInfo | None = None) -> None:
        """Write the event of one completed request; `user` is who authenticated, `impersonated_user`
        whom the request ran as when it impersonated someone."""
        verb, ref, path = info.verb, object_ref(info), info.path
        event: dict[str, Any] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
            "auditID": str(uuid.uuid4()), "stage": "ResponseComplete",
            "requestURI": path + (f"?{query}" if query else ""), "verb": verb,
            "user": user_info_object(user) if user else
                    {"username": "system:anonymous", "groups": ["system:unauthenticated"]},
            **({"impersonatedUser": user_info_object(impersonated_user)} if impersonated_user else {}),
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
