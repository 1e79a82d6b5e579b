"""The transforms a write applies to the current object: PUT's replacement, the three patch
formats, and server-side apply.

Each is built from the decoded request and handed to a storage's `update`, which runs it
inside the registry's compare-and-swap loop, so it may run more than once: a transform is
a pure function of the current object. Hand-written here are only what no library does
with Kubernetes' semantics: strategic merge patch and server-side apply's field sets
(`apiserver.registry.patch`, `apiserver.fieldmanager`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from apiserver.fieldmanager import apply_config
from apiserver.openapi.schema import custom_schema, node_for_gvk
from apiserver.registry.generic import now_rfc3339
from apiserver.registry.patch import JsonPatchFailed, PatchError, json_patch, merge_patch, strategic_merge_patch
from apiserver.registry.rest.interfaces import Kind, UpdateFunc
from kube.errors import BadRequest, Invalid, NotFound, RequestEntityTooLarge, UnsupportedMediaType
from kube.resources import ResourceInfo

__all__ = ["APPLY_PATCH", "replace", "patch", "server_side_apply", "parse_applied"]

Obj = dict[str, Any]
APPLY_PATCH = "application/apply-patch+yaml"
_PATCHERS: dict[str, Callable[..., Any]] = {
    "application/merge-patch+json": merge_patch,
    "application/strategic-merge-patch+json": strategic_merge_patch,
    "application/json-patch+json": json_patch,
}
Checker = Callable[[Obj], None]
MAX_JSON_PATCH_OPERATIONS = 10000


def _go_type(value: Any) -> str:
    """How Go's JSON decoder names the JSON type it could not decode."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    return "string" if isinstance(value, str) else "number"


def _patch_failed() -> Invalid:
    """Upstream's answer to a JSON patch that does not apply: a generic 422 (details empty)."""
    return Invalid("the server rejected our request due to an error in our request", details={})


def replace(body: Obj, check: Checker | None = None) -> UpdateFunc:
    """PUT: the body replaces the object (a missing one is NotFound unless the storage allows create)."""
    def transform(current: Obj | None) -> Obj:
        new = copy.deepcopy(body)
        if check is not None:
            check(new)
        return new
    return transform


def patch(media_type: str, document: Any, kind: Kind, check: Checker) -> UpdateFunc:
    """PATCH in one of the three patch formats; `check` sees (and may prune) the result."""
    patcher = _PATCHERS.get(media_type)
    if patcher is strategic_merge_patch and custom_schema(kind.group, kind.version, kind.kind) is not None:
        # Custom resources have no patch strategies: upstream refuses strategic merge for them.
        accepted = [m for m in (*_PATCHERS, APPLY_PATCH) if m != media_type]
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                   f"include: {', '.join(accepted)}")
    if patcher is None:
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                   f"include: {', '.join((*_PATCHERS, APPLY_PATCH))}")
    if document is None:
        raise BadRequest("the patch body is empty")
    if patcher is json_patch:
        if not isinstance(document, list):
            raise BadRequest(f"json: cannot unmarshal {_go_type(document)} into Go value of type jsonpatch.Patch")
        for op in document:
            if not isinstance(op, dict):
                raise BadRequest(f"json: cannot unmarshal {_go_type(op)} into Go value of type jsonpatch.Operation")
        if len(document) > MAX_JSON_PATCH_OPERATIONS:
            raise RequestEntityTooLarge(f"Request entity too large: The allowed maximum operations in a JSON patch "
                                        f"is {MAX_JSON_PATCH_OPERATIONS}, got {len(document)}")
    node = node_for_gvk(kind.group, kind.version, kind.kind)

    def transform(current: Obj | None) -> Obj:
        if current is None:
            raise NotFound("the server could not find the requested resource")
        try:
            result = strategic_merge_patch(current, document, node) if patcher is strategic_merge_patch \
                else patcher(current, document)
        except JsonPatchFailed:
            raise _patch_failed() from None
        except PatchError as e:
            raise BadRequest(str(e)) from None
        if not isinstance(result, dict):
            raise BadRequest("the patched object is not a JSON object")
        check(result)
        return result
    return transform


def parse_applied(applied: Any, info: ResourceInfo, *, name: str, namespace: str | None) -> Obj:
    """The applied configuration of a server-side apply (its decoded YAML), checked against the URL it was sent to."""
    if not isinstance(applied, dict):
        raise BadRequest("the applied configuration must be an object")
    if applied.get("apiVersion") != info.api_version or applied.get("kind") != info.kind:
        raise BadRequest(f"the applied configuration must have apiVersion {info.api_version!r} and kind "
                         f"{info.kind!r}")
    meta = applied.setdefault("metadata", {})
    if not isinstance(meta, dict) or meta.get("name") not in (None, name):
        raise BadRequest("the name of the applied configuration does not match the name on the URL")
    meta["name"] = name
    if info.namespaced:
        meta["namespace"] = namespace
    return applied


def server_side_apply(applied: Obj, info: ResourceInfo, *, manager: str, force: bool) -> UpdateFunc:
    """Apply a manager's intent: its fields set, others' kept, conflicts refused unless forced."""
    node = node_for_gvk(info.group, info.version, info.kind)
    if node is None:
        raise UnsupportedMediaType("server-side apply is not supported for this resource")

    def transform(current: Obj | None) -> Obj:
        return apply_config(current, applied, manager=manager, force=force, node=node, api_version=info.api_version,
                            now=now_rfc3339(), qualified=info.qualified)
    return transform
