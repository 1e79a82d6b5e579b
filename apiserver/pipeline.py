"""The front of the request pipeline as plain ASGI: authenticate, parse, authorize, dispatch.

Pure ASGI rather than a BaseHTTPMiddleware so streaming responses (watches) pass straight
through and each request costs no extra task. Guarantees:
- a request to anything but the anonymous paths without a valid credential gets a 401
  `Status` and never reaches a handler; the authenticated user is in
  `scope["state"]["authenticated_user"]`, and the user the request runs as (the impersonated
  one when `Impersonate-*` headers ask for it and it is allowed, apiserver/authn/impersonation.py)
  in `scope["state"]["user"]`;
- every request is parsed once into a `RequestInfo`, and authorized from it (resource
  requests by verb, group, resource, namespace and name; others by path) before any handler
  runs: a 403 `Status` in Kubernetes' words otherwise;
- resource requests go to the resource handler, everything else to the plain routes;
- an `ApiError` becomes its `Status`; an unexpected exception before the response started
  becomes a 500 `Status`, logged once;
- every request is observed in the metrics with its verb, resource and code, and, with an
  audit log configured, written to it once it completes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request

from apiserver.audit import AuditLog, header
from apiserver.authn import ANONYMOUS_PATHS, Authenticator, UserInfo
from apiserver.authn.impersonation import impersonate
from apiserver.authn.x509 import client_certificate, user_from_certificate
from apiserver.authz import Attributes, Authorizer, Decision, forbidden_message
from apiserver.endpoints.handlers import ResourceHandler
from apiserver.endpoints.request_info import RequestInfo, parse_request_info
from apiserver.endpoints.responses import status_body
from apiserver.metrics import Metrics
from kube.errors import ApiError, Forbidden, InternalError, Unauthorized

__all__ = ["RequestPipeline", "attributes_for", "send_status"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


async def send_status(send: Send, err: ApiError) -> None:
    """Answer with `err`'s Status, encoded as every other error answer is (`responses.status_body`)."""
    body = status_body(err)
    await send({"type": "http.response.start", "status": err.code,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def attributes_for(user: UserInfo, info: RequestInfo) -> Attributes:
    """The authorization attributes of a parsed request."""
    if not info.is_resource_request:
        return Attributes(user=user, verb=info.verb, resource_request=False, path=info.path)
    return Attributes(user=user, verb=info.verb, api_group=info.api_group, api_version=info.api_version,
                      resource=info.resource, subresource=info.subresource, namespace=info.namespace,
                      name=info.name, path=info.path)


def _query_param(scope: Scope, name: str) -> str | None:
    for part in scope.get("query_string", b"").decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if key == name:
            return str(value)
    return None


class RequestPipeline:
    def __init__(self, *, routes: ASGIApp, handler: ResourceHandler, authenticator: Authenticator,
                 authorizer: Authorizer, metrics: Metrics, audit: AuditLog | None = None) -> None:
        self.routes, self.handler = routes, handler
        self.authenticator, self.authorizer = authenticator, authorizer
        self.metrics, self.audit = metrics, audit

    def authenticate(self, scope: Scope) -> UserInfo | None:
        cert = client_certificate(scope)
        user = user_from_certificate(cert) if cert else None
        if user is None:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            user = self.authenticator.authenticate(headers)
        return user

    def authorize(self, user: UserInfo, info: RequestInfo) -> None:
        attrs = attributes_for(user, info)
        decision, reason = self.authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            details = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource} \
                if info.is_resource_request else None
            raise Forbidden(forbidden_message(attrs, reason), details=details)

    async def serve(self, scope: Scope, receive: Receive, send: Send, info: RequestInfo) -> None:
        try:
            if info.path not in ANONYMOUS_PATHS:
                user = self.authenticate(scope)
                if user is None:
                    raise Unauthorized("Unauthorized")
                state = scope.setdefault("state", {})
                state["authenticated_user"] = state["user"] = user
                acting = impersonate(user, scope["headers"], self.authorizer)
                if acting is not None:
                    state["user"] = user = acting
                self.authorize(user, info)
            if not info.is_resource_request:
                await self.routes(scope, receive, send)
                return
            response = await self.handler.handle(Request(scope, receive), info,
                                                 scope.get("state", {}).get("user") or ANONYMOUS)
        except ApiError as e:
            await send_status(send, e)
            return
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.routes(scope, receive, send)
            return
        start, received = time.monotonic(), time.time()
        info = parse_request_info(str(scope.get("method", "GET")), scope["path"], watch=_query_param(scope, "watch"))
        status = {"code": 500, "started": False}

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = message["status"], True
            await send(message)

        try:
            await self.serve(scope, receive, tracked_send, info)
        except Exception:  # the one place an unexpected failure becomes a 500
            logger.exception("Request failed", extra={"method": scope.get("method"), "path": info.path})
            if not status["started"]:
                await send_status(tracked_send, InternalError("an internal error occurred"))
        finally:
            self.observe(scope, info, int(status["code"]), start, received)

    def observe(self, scope: Scope, info: RequestInfo, code: int, start: float, received: float) -> None:
        resource = info.resource if info.is_resource_request else info.path.rstrip("/").rsplit("/", 1)[-1]
        self.metrics.observe(verb=str(scope.get("method")), resource=resource, code=code,
                             seconds=time.monotonic() - start)
        if self.audit is not None:
            client, state = scope.get("client"), scope.get("state") or {}
            authenticated, acting = state.get("authenticated_user"), state.get("user")
            self.audit.record(info=info, query=scope.get("query_string", b"").decode("latin-1"),
                              user=authenticated, impersonated_user=acting if acting is not authenticated else None,
                              code=code,
                              source_ip=client[0] if client else None, user_agent=header(scope, b"user-agent"),
                              received=received, completed=time.time())
