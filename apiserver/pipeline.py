"""The front of the request pipeline as plain ASGI: authenticate, count, and never leak a 500.

Pure ASGI rather than a BaseHTTPMiddleware so streaming responses (watches) pass straight
through and each request costs no extra task. Guarantees:
- a request to anything but the anonymous paths without a valid credential gets a 401
  `Status` and never reaches a handler; the authenticated user is in `scope["state"]["user"]`;
- an unexpected exception before the response started becomes a 500 `Status`, logged once;
- every request is observed in the metrics with its verb, resource and code, and, with an
  audit log configured, written to it once it completes.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Awaitable, Callable, MutableMapping

from kube.errors import ApiError, Forbidden, InternalError, Unauthorized
from apiserver.audit import AuditLog, header
from apiserver.authn import ANONYMOUS_PATHS, Authenticator
from apiserver.authn.x509 import client_certificate, user_from_certificate
from apiserver.authz import Attributes, Decision, forbidden_message
from apiserver.metrics import Metrics

__all__ = ["RequestPipeline"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


async def _send_status(send: Callable[[Message], Awaitable[None]], err: ApiError) -> None:
    body = json.dumps(err.status).encode()
    await send({"type": "http.response.start", "status": err.code,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class RequestPipeline:
    def __init__(self, app: ASGIApp, *, authenticator: Authenticator, metrics: Metrics,
                 resources: ASGIApp | None = None, authorizer: Callable[[], Any] | None = None,
                 audit: AuditLog | None = None) -> None:
        self.app, self.authenticator, self.metrics = app, authenticator, metrics
        self.audit = audit
        self.resources = resources
        self.authorizer = authorizer or (lambda: None)

    def route(self, path: str) -> ASGIApp:
        """Resource paths (/api/v1/<...>, /apis/<group>/<version>/<...>) go straight to the resource app."""
        if self.resources is not None:
            parts = path.split("/", 5)
            if (len(parts) >= 4 and parts[1] == "api" and parts[3]) or \
                    (len(parts) >= 5 and parts[1] == "apis" and parts[4]):
                return self.resources
        return self.app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.monotonic()
        received = time.time()
        path: str = scope["path"]
        status = {"code": 500, "started": False}

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = message["status"], True
            await send(message)

        try:
            if path not in ANONYMOUS_PATHS:
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
                cert = client_certificate(scope)
                user = user_from_certificate(cert) if cert else None
                if user is None:
                    user = self.authenticator.authenticate(headers)
                if user is None:
                    await _send_status(tracked_send, Unauthorized("Unauthorized"))
                    return
                scope.setdefault("state", {})["user"] = user
                target = self.route(path)
                authorizer = self.authorizer()
                if target is not self.resources and authorizer is not None:
                    # Resource requests are authorized by the handler, which knows their attributes.
                    attrs = Attributes(user=user, verb=str(scope.get("method", "GET")).lower(),
                                       resource_request=False, path=path)
                    decision, reason = authorizer.authorize(attrs)
                    if decision is not Decision.ALLOW:
                        await _send_status(tracked_send, Forbidden(forbidden_message(attrs, reason)))
                        return
            await self.route(path)(scope, receive, tracked_send)
        except Exception:  # the one place an unexpected failure becomes a 500
            logger.exception("Request failed", extra={"method": scope.get("method"), "path": path})
            if not status["started"]:
                await _send_status(tracked_send, InternalError("an internal error occurred"))
        finally:
            parts = path.rstrip("/").rsplit("/", 1)
            self.metrics.observe(verb=str(scope.get("method")), resource=parts[-1] if parts else "",
                                 code=int(status["code"]), seconds=time.monotonic() - start)
            if self.audit is not None:
                client = scope.get("client")
                self.audit.record(method=str(scope.get("method", "GET")), path=path,
                                  query=scope.get("query_string", b"").decode("latin-1"),
                                  user=(scope.get("state") or {}).get("user"), code=int(status["code"]),
                                  source_ip=client[0] if client else None,
                                  user_agent=header(scope, b"user-agent"), received=received, completed=time.time())
