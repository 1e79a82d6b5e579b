"""The plain routes: health, version, metrics, discovery and OpenAPI documents.

Everything here derives from the resource registry at the time of asking, so a resource
added while the server runs is discovered and described at once. The service-account
issuer's discovery documents join these routes from `oidc`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from apiserver.endpoints import discovery
from apiserver.endpoints.responses import json_response, status_response
from apiserver.metrics import Metrics
from apiserver.openapi import documents, protobuf_v2
from apiserver.openapi.schema import custom_generation
from apiserver.registry.resource_registry import ResourceRegistry
from kube.errors import ApiError, NotAcceptable, NotFound

__all__ = ["build_routes"]


# The API server traces its own hops; the built-in request telemetry of newer FastAPI
# releases would add a span, metrics and logs to every plain route (the OTLP receiver too).
_NO_TELEMETRY: dict[str, Any] = (
    {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {})


def _not_found() -> NotFound:
    return NotFound("the server could not find the requested resource")


def build_routes(*, registry: ResourceRegistry, metrics: Metrics, ready: Callable[[], Awaitable[bool]],
                 server_address: str) -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None, **_NO_TELEMETRY)

    async def api_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return status_response(exc)

    app.add_exception_handler(ApiError, api_error)

    @app.get("/healthz")
    @app.get("/livez")
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @app.get("/readyz")
    async def readyz() -> Response:
        if await ready():
            return PlainTextResponse("ok")
        return PlainTextResponse("[-]etcd failed: reason withheld\nreadyz check failed", status_code=500)

    @app.get("/version")
    async def version() -> Response:
        return json_response(discovery.version_info())

    @app.get("/metrics")
    async def metrics_endpoint() -> Response:
        return Response(metrics.render(), media_type=metrics.content_type)

    def aggregated(request: Request, *, legacy: bool) -> Response | None:
        version = discovery.aggregated_media_type(request.headers.get("accept", ""))
        if version is None:
            return None
        body = discovery.aggregated_discovery(registry, legacy=legacy, version=version)
        media = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
        return Response(json.dumps(body), media_type=media, headers={"Vary": "Accept"})

    @app.get("/api")
    async def api(request: Request) -> Response:
        return aggregated(request, legacy=True) or json_response(discovery.api_versions(server_address))

    @app.get("/apis")
    async def apis(request: Request) -> Response:
        return aggregated(request, legacy=False) or json_response(discovery.api_group_list(registry))

    @app.get("/api/{version}")
    async def core_resources(version: str) -> Response:
        doc = discovery.api_resource_list(registry, "", version)
        if doc is None:
            raise _not_found()
        return json_response(doc)

    @app.get("/apis/{group}/{version}")
    async def group_resources(group: str, version: str) -> Response:
        doc = discovery.api_resource_list(registry, group, version)
        if doc is None:
            raise _not_found()
        return json_response(doc)

    @app.get("/apis/{group}")
    async def group_doc(group: str) -> Response:
        for g in discovery.api_group_list(registry)["groups"]:
            if g["name"] == group:
                return json_response({"kind": "APIGroup", "apiVersion": "v1", **g})
        raise _not_found()

    @app.get("/openapi/v2")
    async def openapi_v2(request: Request) -> Response:
        accept = request.headers.get("accept", "application/json")
        infos, version = tuple(registry.infos()), discovery.openapi_version()
        generation = custom_generation()
        for media in (m.split(";")[0].strip() for m in accept.split(",")):
            if media.startswith("application/com.github.proto-openapi.spec.v2") and media.endswith("+protobuf"):
                return Response(documents.openapi_v2_protobuf(infos, version, generation),
                                media_type=protobuf_v2.MEDIA_TYPE)
            if media in ("application/json", "*/*", "application/*"):
                return Response(documents.openapi_v2(infos, version, generation), media_type="application/json")
        raise NotAcceptable("only application/json and application/com.github.proto-openapi.spec.v2@v1.0+protobuf "
                            "are served for /openapi/v2")

    @app.get("/openapi/v3")
    async def openapi_v3_index() -> Response:
        return json_response(documents.openapi_v3_index(tuple(registry.infos()), discovery.openapi_version(),
                                                       custom_generation()))

    @app.get("/openapi/v3/{gv:path}")
    async def openapi_v3(gv: str) -> Response:
        body = documents.openapi_v3_group(tuple(registry.infos()), gv, discovery.openapi_version(),
                                           custom_generation())
        if body is None:
            raise _not_found()
        return Response(body, media_type="application/json", headers={"Cache-Control": "public, immutable"})

    return app
