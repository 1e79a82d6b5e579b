"""Decoding requests: bodies (size-limited, JSON, YAML or Kubernetes protobuf), their kind, and query options.

Every malformed input becomes a 4xx `ApiError` here, with upstream's wording where it has
one, so nothing past the decoder sees a value of the wrong shape.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import yaml
from starlette.requests import Request

from apiserver.apiextensions.structural import prune
from apiserver.endpoints.bounded import DecodeError, decode_json, decode_yaml, summarize, too_large_message
from apiserver.endpoints.list_validation import validate_list_options
from apiserver.fieldmanager import manager_from_user_agent
from apiserver.openapi.schema import custom_schema, node_for_gvk, prune_unknown_fields, type_errors
from apiserver.protobuf import codec
from apiserver.registry.generic import DeleteOptions, ListOptions
from apiserver.registry.rest.interfaces import Kind
from kube.errors import BadRequest, RequestEntityTooLarge, UnsupportedMediaType
from kube.selectors import parse_field_selector, parse_label_selector

__all__ = ["BodyReader", "bool_param", "check_unknown_fields", "dry_run", "field_manager", "int_param",
           "list_options", "truthy", "content_type"]

Obj = dict[str, Any]

# Bodies up to this size are decoded on the event loop: for them a thread hop (and the GIL
# handed back and forth) costs more than the decode itself. Larger ones go to a thread so
# that one big document does not hold up every other request.
INLINE_DECODE_BYTES = 16 << 10


async def _off_loop_if_large(decode: Callable[[bytes], Any], raw: bytes) -> Any:
    if len(raw) <= INLINE_DECODE_BYTES:
        return decode(raw)
    return await asyncio.to_thread(decode, raw)


def truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "t", "yes")


def content_type(request: Request, default: str = "application/json") -> str:
    return (request.headers.get("content-type") or default).split(";")[0].strip()


_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_int64(raw: str) -> int:
    """`raw` as Go's strconv.ParseInt(raw, 10, 64) reads it; BadRequest in its words otherwise."""
    if not _GO_INT.fullmatch(raw):
        raise BadRequest(f'strconv.ParseInt: parsing "{raw}": invalid syntax')
    value = int(raw)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise BadRequest(f'strconv.ParseInt: parsing "{raw}": value out of range')
    return value


def int_param(request: Request, name: str) -> int | None:
    """An int64 query parameter (limit, timeoutSeconds, ...); None when absent or empty."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    return parse_int64(raw)


def field_manager(request: Request) -> str:
    return request.query_params.get("fieldManager") or manager_from_user_agent(request.headers.get("user-agent", ""))


def dry_run(request: Request) -> bool:
    values = request.query_params.getlist("dryRun")
    for v in values:
        if v != "All":
            raise BadRequest(f'Invalid dryRun value {v!r}: valid values are "All"')
    return bool(values)


def bool_param(request: Request, name: str) -> bool | None:
    """A boolean query parameter as Go's strconv.ParseBool reads it; None when absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if raw in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if raw in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise BadRequest(f'strconv.ParseBool: parsing "{raw}": invalid syntax')


def list_options(request: Request) -> ListOptions:
    """The list (or watch) options of the query; 400 for a malformed one, 422 for a refused combination."""
    q = request.query_params
    try:
        labels = parse_label_selector(q.get("labelSelector"))
        fields = parse_field_selector(q.get("fieldSelector"))
    except ValueError as e:
        raise BadRequest(str(e)) from None
    opts = ListOptions(label_selector=labels, field_selector=fields, limit=int_param(request, "limit") or 0,
                       continue_token=q.get("continue") or None, resource_version=q.get("resourceVersion"),
                       resource_version_match=q.get("resourceVersionMatch") or None,
                       send_initial_events=bool_param(request, "sendInitialEvents"))
    validate_list_options(opts, watch=truthy(q.get("watch")))
    return opts


def _field_validation(request: Request) -> str:
    value = request.query_params.get("fieldValidation") or "Warn"
    if value not in ("Strict", "Warn", "Ignore"):
        raise BadRequest(f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", "Strict", '
                         f'"Warn"')
    return value


def check_unknown_fields(request: Request, kind: Kind, obj: Obj) -> list[str]:
    """Prune fields the kind does not declare; 400 for them under Strict, warnings under Warn."""
    node = node_for_gvk(kind.group, kind.version, kind.kind)
    if node is None:
        return []
    mode = _field_validation(request)
    structural = custom_schema(kind.group, kind.version, kind.kind)
    if structural is not None:
        # A custom resource: wrong types in its own fields are the schema validation's 422, not a
        # decoding error; its metadata is an ObjectMeta all the same, decoded as a built-in's is.
        errors = type_errors(obj.get("metadata"), node.field("metadata"), "metadata")
        if errors:
            raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
                             f'{errors[0]}')
        unknown = prune(obj, structural)
        if isinstance(obj.get("metadata"), dict):
            unknown += prune_unknown_fields(obj["metadata"], node.field("metadata"), "metadata")
    else:
        errors = type_errors(obj, node)
        if errors:
            raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
                             f'{errors[0]}')
        unknown = prune_unknown_fields(obj, node)
    if not unknown or mode == "Ignore":
        return []
    messages = [f'unknown field "{u}"' for u in unknown]
    if mode == "Strict":
        raise BadRequest(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: '
                         f"strict decoding error: {', '.join(messages)}")
    return [_header_safe(m) for m in messages]


def _header_safe(text: str) -> str:
    """Text for a quoted Warning header value: quotes and backslashes escaped, control characters as Go's \\xNN."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(ch if " " <= ch != "\x7f" else f"\\x{ord(ch):02x}" for ch in out)


class BodyReader:
    """Reads request bodies no larger than the server's limit."""

    def __init__(self, max_request_bytes: int) -> None:
        self.max_request_bytes = max_request_bytes

    async def raw(self, request: Request) -> bytes:
        """The whole body; 413 as soon as it (or its declared length) passes the limit, never reading on."""
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > self.max_request_bytes:
            raise RequestEntityTooLarge(too_large_message(self.max_request_bytes))
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_request_bytes:
                raise RequestEntityTooLarge(too_large_message(self.max_request_bytes))
        return b"".join(chunks)

    async def yaml(self, request: Request) -> Any:
        """The body as one YAML document (None when empty), decoded off the event loop with bounded expansion.

        Raises DecodeError or yaml.YAMLError for a body that is refused.
        """
        raw = await self.raw(request)
        return await asyncio.to_thread(decode_yaml, raw) if raw.strip() else None

    async def document(self, request: Request) -> Any:
        """The body as JSON (or YAML, or a protobuf object as its JSON), None when empty; 415 for other
        media types, 400 for a body that does not decode (DecodeError's message as is)."""
        try:
            return await self._decoded(request)
        except DecodeError as e:
            raise BadRequest(str(e)) from None

    async def _decoded(self, request: Request) -> Any:
        media = content_type(request, "")
        is_yaml = media == "application/yaml"
        if media and not (media == "application/json" or media.endswith("+json") or is_yaml
                          or media in ("text/plain", "*/*", codec.MEDIA_TYPE)):
            raise UnsupportedMediaType("the body of the request was in an unknown format - accepted media types "
                                       "include: application/json, application/yaml, "
                                       "application/vnd.kubernetes.protobuf")
        raw = await self.raw(request)
        if not raw.strip():
            return None
        if media == codec.MEDIA_TYPE:
            try:
                return await _off_loop_if_large(codec.decode_object, raw)
            except codec.ProtobufError as e:
                raise BadRequest(str(e)) from None
        try:
            if is_yaml:
                return await asyncio.to_thread(decode_yaml, raw)
            return await _off_loop_if_large(decode_json, raw)
        except DecodeError as e:
            e.raw = raw
            raise
        except yaml.YAMLError as e:
            raise BadRequest(f"error decoding YAML: {e}") from None
        except (ValueError, UnicodeDecodeError) as e:
            raise BadRequest(f"the request body is not valid JSON: {e}") from None

    async def object(self, request: Request, kind: Kind, *, namespace: str | None, namespaced: bool) -> Obj:
        """The body as an object of `kind`: its kind and apiVersion filled in, checked when given."""
        try:
            body = await self._decoded(request)
        except DecodeError as e:
            # As upstream: the kind could not even be read from a body its decoder refused.
            cause = str(e) if content_type(request, "") == "application/yaml" else \
                f"couldn't get version/kind; json parse error: {e}"
            raise BadRequest(f"the object provided is unrecognized (must be of type {kind.kind}): {cause} "
                             f"({summarize(e.raw)})") from None
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        api_version = body.get("apiVersion")
        if api_version not in (None, "", kind.api_version):
            raise BadRequest(f"the API version in the data ({api_version}) does not match the expected API version "
                             f"({kind.api_version})")
        if body.get("kind") not in (None, "", kind.kind):
            raise BadRequest(f"the kind in the data ({body.get('kind')}) does not match the expected kind "
                             f"({kind.kind})")
        body["kind"], body["apiVersion"] = kind.kind, kind.api_version
        meta = body.get("metadata")
        if meta is None:
            body["metadata"] = meta = {}
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        ns = meta.get("namespace")
        if namespaced and namespace and ns not in (None, "", namespace):
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        return body

    async def delete_options(self, request: Request) -> DeleteOptions:
        body = await self.document(request)
        opts: Obj = body if isinstance(body, dict) else {}
        q = request.query_params
        grace = opts.get("gracePeriodSeconds", int_param(request, "gracePeriodSeconds"))
        policy = opts.get("propagationPolicy") or q.get("propagationPolicy")
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise BadRequest(f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", '
                             f'"Background", "Orphan"')
        pre = opts.get("preconditions") or {}
        if not isinstance(pre, dict):
            raise BadRequest("preconditions must be an object")
        if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
            raise BadRequest("gracePeriodSeconds must be an integer")
        orphan = opts.get("orphanDependents", bool_param(request, "orphanDependents"))
        if orphan is not None and not isinstance(orphan, bool):
            raise BadRequest("orphanDependents must be a boolean")
        if orphan and policy is None:
            policy = "Orphan"  # the deprecated spelling of propagationPolicy=Orphan
        return DeleteOptions(grace_period_seconds=grace, propagation_policy=policy,
                             precondition_uid=pre.get("uid"), precondition_resource_version=pre.get("resourceVersion"),
                             dry_run=bool(opts.get("dryRun")) or dry_run(request), orphan_dependents=orphan)

