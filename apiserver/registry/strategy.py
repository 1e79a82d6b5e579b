"""Per-kind behaviour plugged into the generic registry: what the server sets, resets and checks.

Mirrors apiserver's rest.RESTCreateStrategy / RESTUpdateStrategy: `prepare_for_create` and
`prepare_for_update` normalise an incoming object (fill in defaults, drop status on the main
resource, keep spec on the status subresource, bump generation on spec changes),
`validate*` return every field error at once (the kind's own checks via `validate_kind*`,
plus the checks every kind gets from its schema), `field_value` backs field selectors, and
`graceful_delete_seconds` decides whether a DELETE only marks the object (pods on a node).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from apiserver.openapi.schema import node_for_gvk
from apiserver.registry.defaults import apply_defaults
from apiserver.validation.schema_checks import merge_errors, schema_errors
from kube.errors import FieldError
from kube.resources import ResourceInfo

__all__ = ["Strategy", "DNS1123_SUBDOMAIN", "validate_object_meta"]

Obj = dict[str, Any]

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def validate_object_meta(obj: Obj, *, namespaced: bool, label_name: bool = False) -> list[FieldError]:
    errs: list[FieldError] = []
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not name:
        errs.append(FieldError("metadata.name", "Required value: name or generateName is required",
                               reason="FieldValueRequired"))
    elif label_name and (len(name) > 63 or not DNS1123_LABEL.match(name)):
        errs.append(FieldError("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 label must consist '
                               "of lower case alphanumeric characters or '-', and must start and end with an "
                               "alphanumeric character"))
    elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        errs.append(FieldError("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must '
                               "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                               "with an alphanumeric character"))
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())):
            errs.append(FieldError(f"metadata.{field}", "Invalid value: must be a map of string to string"))
            continue
        for key, v in (value or {}).items():
            problem = qualified_name_error(str(key))
            if problem:
                errs.append(FieldError(f"metadata.{field}", f'Invalid value: "{key}": {problem}'))
            if field == "labels" and (len(v) > 63 or not LABEL_VALUE.match(v)):
                errs.append(FieldError(f"metadata.{field}", f'Invalid value: "{v}": a valid label must be an empty '
                                       "string or consist of alphanumeric characters, '-', '_' or '.', and must start "
                                       "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                                       "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                                       "[A-Za-z0-9])?')"))
        if field == "annotations" and value and sum(len(k) + len(v) for k, v in value.items()) > 256 * 1024:
            errs.append(FieldError("metadata.annotations", "Too long: must have at most 262144 bytes",
                                   reason="FieldValueTooLong"))
    return errs


QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def qualified_name_error(key: str) -> str | None:
    """Why `key` is not a Kubernetes qualified name (`[prefix/]name`), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix)):
        return ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                "or '.', and must start and end with an alphanumeric character")
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not QUALIFIED_NAME.match(name):
        return ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    return None


class Strategy:
    """The default behaviour; kinds override what differs."""

    tracks_generation = False
    # Graceful deletion: objects of this kind, once marked, stay in storage until whoever stops
    # them (the kubelet, for pods) deletes them again with a grace period of 0; the registry
    # always records `deletionGracePeriodSeconds` for them.
    waits_for_graceful_termination = False
    # Extra field-selector fields beyond metadata.name / metadata.namespace.
    selectable_fields: ClassVar[Mapping[str, str]] = {}

    def __init__(self, info: ResourceInfo) -> None:
        self.info = info
        self.schema = node_for_gvk(info.group, info.version, info.kind)

    # -- create / update -----------------------------------------------------------------
    def prepare_for_create(self, obj: Obj) -> None:
        apply_defaults(self.info.kind, obj)
        if self.info.has_status:
            obj.pop("status", None)
            self.default_status(obj)

    def default_status(self, obj: Obj) -> None:
        """Status a fresh object starts with (the main resource never sets status)."""

    def holds_deletion(self, obj: Obj) -> bool:
        """True while something besides metadata.finalizers keeps a deleted object (a namespace's spec.finalizers)."""
        return False

    def prepare_for_delete(self, obj: Obj) -> None:
        """Changes made when the object is marked for deletion (a namespace turns Terminating)."""

    def delete_finalizers(self, obj: Obj) -> tuple[str, ...]:
        """Finalizers the first DELETE adds, so the server itself can finish the deletion (a CRD's cleanup)."""
        return ()

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource == "binding":
            return  # the binding handler itself changes exactly spec.nodeName and the PodScheduled condition
        if subresource == "status":
            status = new.get("status")
            meta = new.get("metadata") or {}
            new.clear()
            new.update(copy.deepcopy(old))
            if status is not None:
                new["status"] = status
            else:
                new.pop("status", None)
            # Status writers may change labels and annotations only through the main resource.
            new["metadata"]["resourceVersion"] = meta.get("resourceVersion")
            apply_defaults(self.info.kind, new)  # status has defaults too (a node's allocatable)
            return
        apply_defaults(self.info.kind, new)
        if self.info.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        if self.tracks_generation:
            gen = int((old.get("metadata") or {}).get("generation") or 1)
            if self.spec_of(new) != self.spec_of(old):
                gen += 1
            new["metadata"]["generation"] = gen

    def spec_of(self, obj: Obj) -> Any:
        """What counts as the spec for generation bumps (everything but metadata and status)."""
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}

    def validate(self, obj: Obj) -> list[FieldError]:
        """Every error in a new object: the kind's own checks plus the schema's (see `schema_checks`)."""
        return merge_errors(self.validate_kind(obj), self._schema_errors(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Every error in an updated object, including changes the kind forbids."""
        return merge_errors(self.validate_kind_update(new, old), self._schema_errors(new))

    def validate_subresource_update(self, new: Obj, old: Obj, *, subresource: str) -> list[FieldError]:
        """Every error in an update made through `subresource` (by default: as an update of the object)."""
        return self.validate_update(new, old)

    def _schema_errors(self, obj: Obj) -> list[FieldError]:
        return schema_errors(obj, self.schema) if self.schema is not None else []

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        """The kind's hand-written validation of a new object (kinds override it)."""
        return validate_object_meta(obj, namespaced=self.info.namespaced)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """The kind's hand-written validation of an update (by default: as a new object)."""
        return self.validate_kind(new)

    # -- delete --------------------------------------------------------------------------
    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """Seconds of grace before the object is really removed; 0 means delete now."""
        return 0

    # -- field selectors -----------------------------------------------------------------
    def field_value(self, obj: Obj, field: str) -> str | None:
        """The value of a selectable field, or None when the field cannot be selected on."""
        meta = obj.get("metadata") or {}
        if field == "metadata.name":
            return str(meta.get("name") or "")
        if field == "metadata.namespace":
            return str(meta.get("namespace") or "")
        path = self.selectable_fields.get(field)
        if path is None:
            return None
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, bool):
            return "true" if node else "false"
        return "" if node is None else str(node)
