"""The front of the request pipeline as plain ASGI: authenticate, parse, authorize, dispatch.

Pure ASGI rather than a BaseHTTPMiddleware so streaming responses (watches) pass straight
through and each request costs no extra task. Guarantees:
- a request to anything but the anonymous paths without a valid credential gets a 401 (a
  credential-less GET of an ANONYMOUS_RESOURCE_PATHS entry runs as system:anonymous instead,
  and RBAC decides)
  `Status` and never reaches a handler; the authenticated user is in
  `scope["state"]["authenticated_user"]`, and the user the request runs as (the impersonated
  one when `Impersonate-*` headers ask for it and it is allowed, apiserver/authn/impersonation.py)
  in `scope["state"]["user"]`;
- every request is parsed once into a `RequestInfo`, and authorized from it (resource
  requests by verb, group, resource, namespace and name; others by path) before any handler
  runs: a 403 `Status` in Kubernetes' words otherwise;
- between authentication and authorization, as upstream's filter chain orders them, a request
  takes a seat of the max-in-flight limit or of its user's long-running budget and holds it
  until answered, or gets a 429 (`apiserver.filters.maxinflight`); a request that is not
  long-running is answered within its deadline or gets a 504 (`apiserver.filters.timeout`);
- resource requests go to the resource handler, everything else to the plain routes;
- an `ApiError` becomes its `Status`; an unexpected exception before the response started
  becomes a 500 `Status`, logged once;
- a write to a resource runs in a server span (KEP-647's apiserver tracing): a child of the
  caller's `traceparent` header, else, for a person's write, the root of a new trace; a
  component's write without one is not traced. The registry records that span's context on
  the object it writes (`kube.tracing.stamp`), so whatever reacts to the object continues it;
- every request is observed in the metrics with its verb, resource and code, and, with an
  audit log configured, written to it once it completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from starlette.requests import Request

from apiserver.audit import AuditLog, header
from apiserver.authn import ANONYMOUS_PATHS, ANONYMOUS_PREFIXES, Authenticator, UserInfo
from apiserver.authn.impersonation import impersonate
from apiserver.authn.x509 import client_certificate, user_from_certificate
from apiserver.authz import Attributes, Authorizer, Decision, forbidden_message
from apiserver.endpoints.handlers import ResourceHandler
from apiserver.endpoints.request_info import RequestInfo, parse_request_info
from apiserver.endpoints.responses import status_body
from apiserver.filters import InflightLimiter, is_long_running, request_deadline, timed_out
from apiserver.metrics import Metrics
from kube.errors import ApiError, Forbidden, InternalError, Unauthorized
from kube.tracing import TRACEPARENT, attrs, extract_traceparent, phase, tracer

__all__ = ["RequestPipeline", "attributes_for", "send_status"]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_COMPONENT_GROUPS = frozenset({"system:nodes", "system:serviceaccounts"})
# Read as system:anonymous when no credential is given (upstream's anonymous authentication,
# limited here to what a joining machine needs before it has one: the cluster-info ConfigMap,
# which kubeadm lets system:anonymous read with a Role in kube-public).
ANONYMOUS_RESOURCE_PATHS = frozenset({"/api/v1/namespaces/kube-public/configmaps/cluster-info"})


def _trace_parent(scope: Scope, info: RequestInfo, user: UserInfo) -> otel_context.Context | None:
    """The context a write's span starts in, or None when the request is not traced."""
    if not info.is_resource_request or scope.get("method") not in _WRITES:
        return None
    parent = extract_traceparent(header(scope, TRACEPARENT.encode()))
    if parent is not None:
        return trace.set_span_in_context(trace.NonRecordingSpan(parent), otel_context.Context())
    if user.name.startswith("system:") or _COMPONENT_GROUPS.intersection(user.groups):
        return None  # a component's own housekeeping (heartbeats, leases) starts no trace
    return otel_context.Context()


@contextlib.contextmanager
def _write_span(scope: Scope, info: RequestInfo, user: UserInfo, authn_seconds: float) -> Iterator[None]:
    parent = _trace_parent(scope, info, user)
    if parent is None:
        yield
        return
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    with tracer().start_as_current_span(f"{info.verb} {resource}", context=parent, kind=trace.SpanKind.SERVER,
                                        record_exception=False, attributes={
                                            attrs.ACTOR: attrs.APISERVER, attrs.HOP: True, attrs.VERB: info.verb,
                                            attrs.USER: user.name, attrs.SUBRESOURCE: info.subresource or "",
                                            attrs.NAME: info.name or ""}) as span:
        span.add_event("authenticated", {"seconds": authn_seconds})
        yield


async def send_status(send: Send, err: ApiError) -> None:
    """Answer with `err`'s Status, encoded as every other error answer is (`responses.status_body`), with a
    `Retry-After` header when the Status asks the client to retry after some seconds (as upstream's writers do)."""
    body = status_body(err)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    retry_after = (err.details or {}).get("retryAfterSeconds")
    if retry_after:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": err.code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def attributes_for(user: UserInfo, info: RequestInfo) -> Attributes:
    """The authorization attributes of a parsed request."""
    if not info.is_resource_request:
        return Attributes(user=user, verb=info.verb, resource_request=False, path=info.path)
    return Attributes(user=user, verb=info.verb, api_group=info.api_group, api_version=info.api_version,
                      resource=info.resource, subresource=info.subresource, namespace=info.namespace,
                      name=info.name, path=info.path)


def _anonymous_read(scope: Scope, info: RequestInfo) -> bool:
    """A credential-less read of a path anonymous requests may try (RBAC still decides)."""
    if info.verb != "get" or info.path not in ANONYMOUS_RESOURCE_PATHS:
        return False
    return not any(k.lower() == b"authorization" for k, _ in scope["headers"])


def _query_param(scope: Scope, name: str) -> str | None:
    for part in scope.get("query_string", b"").decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if key == name:
            return str(value)
    return None


class RequestPipeline:
    def __init__(self, *, routes: ASGIApp, handler: ResourceHandler, authenticator: Authenticator,
                 authorizer: Authorizer, metrics: Metrics, limiter: InflightLimiter, request_timeout: float,
                 audit: AuditLog | None = None) -> None:
        self.routes, self.handler = routes, handler
        self.limiter, self.request_timeout = limiter, request_timeout
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

    def identify(self, scope: Scope, info: RequestInfo) -> UserInfo | None:
        """The user the request runs as (None on the anonymous paths); Unauthorized without a valid credential."""
        if info.path in ANONYMOUS_PATHS or info.path.startswith(ANONYMOUS_PREFIXES):
            return None
        user = self.authenticate(scope)
        if user is None and _anonymous_read(scope, info):
            user = ANONYMOUS
        if user is None:
            raise Unauthorized("Unauthorized")
        state = scope.setdefault("state", {})
        state["authenticated_user"] = state["user"] = user
        acting = impersonate(user, scope["headers"], self.authorizer)
        if acting is not None:
            state["user"] = user = acting
        return user

    async def serve(self, scope: Scope, receive: Receive, send: Send, info: RequestInfo) -> None:
        """Authenticate, take a seat of the in-flight limit, then authorize and handle."""
        try:
            started = time.monotonic()
            user = self.identify(scope, info)
            seat = self.limiter.admit(info, user)
        except ApiError as e:
            await send_status(send, e)
            return
        try:
            await self.serve_admitted(scope, receive, send, info, user, time.monotonic() - started)
        finally:
            seat.release()

    async def serve_admitted(self, scope: Scope, receive: Receive, send: Send, info: RequestInfo,
                             user: UserInfo | None, authn_seconds: float) -> None:
        try:
            with _write_span(scope, info, user or ANONYMOUS, authn_seconds):
                response = await self.authorize_and_handle(scope, receive, send, info, user)
                if response is None:
                    return
        except ApiError as e:
            await send_status(send, e)
            return
        await response(scope, receive, send)

    async def authorize_and_handle(self, scope: Scope, receive: Receive, send: Send, info: RequestInfo,
                                   user: UserInfo | None) -> Any:
        """Authorize, then serve a plain route (None: answered already) or return the resource response."""
        if user is not None:
            with phase("authorize"):
                self.authorize(user, info)
        if not info.is_resource_request:
            await self.routes(scope, receive, send)
            return None
        span = trace.get_current_span()
        try:
            return await self.handler.handle(Request(scope, receive), info, user or ANONYMOUS)
        except ApiError as e:
            if span.is_recording():
                span.set_status(trace.StatusCode.ERROR, f"{e.code} {e}")
            raise

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
            await self.serve_within_deadline(scope, receive, tracked_send, info, status)
        except Exception:  # the one place an unexpected failure becomes a 500
            logger.exception("Request failed", extra={"method": scope.get("method"), "path": info.path})
            if not status["started"]:
                await send_status(tracked_send, InternalError("an internal error occurred"))
        finally:
            self.observe(scope, info, int(status["code"]), start, received)

    async def serve_within_deadline(self, scope: Scope, receive: Receive, send: Send, info: RequestInfo,
                                    status: dict[str, Any]) -> None:
        """Serve a request that is not long-running within its deadline (`apiserver.filters.timeout`)."""
        if is_long_running(info):
            await self.serve(scope, receive, send, info)
            return
        try:
            seconds = request_deadline(scope.get("query_string", b""), self.request_timeout)
        except ApiError as e:
            await send_status(send, e)
            return
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                await self.serve(scope, receive, send, info)
        except TimeoutError:
            if not deadline.expired():
                raise
            if status["started"]:
                # Nothing can tell the client now: returning with the response unfinished makes
                # uvicorn close the connection, as upstream aborts it.
                logger.warning("Request outran its deadline while answering", extra={"path": info.path})
                return
            await send_status(send, timed_out())

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
