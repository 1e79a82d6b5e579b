"""CustomResourceDefinitions: defaults, validation and the deletion that cleans up first.

Mirrors apiextensions-apiserver's `pkg/registry/customresourcedefinition` strategy and
`pkg/apis/apiextensions/validation`. A new CRD starts with empty status and its storage
version in `status.storedVersions`; an update that moves the storage version adds the new
one. Deleting a CRD marks it Terminating and adds the `customresourcecleanup` finalizer,
which the CRD controller removes once every custom resource of it is gone. Validation
reports every error at once with upstream's wording.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.apiextensions import cel
from apiserver.registry.strategy import DNS1123_SUBDOMAIN, Obj, Strategy, validate_object_meta
from apiserver.validation.field import duplicate, invalid, not_supported, required
from kube.errors import FieldError
from kube.timeutil import format_time, utc_now

__all__ = ["CRDStrategy", "CLEANUP_FINALIZER", "set_condition", "storage_version"]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex "
                "used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")


def storage_version(crd: Obj) -> str | None:
    versions = (crd.get("spec") or {}).get("versions") or []
    return next((v.get("name") for v in versions if isinstance(v, dict) and v.get("storage")), None)


def set_condition(crd: Obj, type_: str, status: str, reason: str, message: str) -> None:
    """Set one status condition, keeping its transition time when its status does not change."""
    conditions = crd.setdefault("status", {}).setdefault("conditions", [])
    old = next((c for c in conditions if c.get("type") == type_), None)
    new = {"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": old.get("lastTransitionTime") if old and old.get("status") == status
           else format_time(utc_now())}
    if old is None:
        conditions.append(new)
    else:
        old.clear()
        old.update(new)


class CRDStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: Obj) -> None:
        _default(obj)
        obj["status"] = {"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}
        if (stored := storage_version(obj)) is not None:
            obj["status"]["storedVersions"] = [stored]

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource != "status":
            _default(new)
        super().prepare_for_update(new, old, subresource=subresource)
        stored = storage_version(new)
        versions = new.setdefault("status", {}).setdefault("storedVersions", [])
        if stored is not None and stored not in versions:
            versions.append(stored)

    def delete_finalizers(self, obj: Obj) -> tuple[str, ...]:
        return (CLEANUP_FINALIZER,)

    def prepare_for_delete(self, obj: Obj) -> None:
        set_condition(obj, "Terminating", "True", "InstanceDeletionInProgress",
                      "CustomResource deletion is in progress")

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=False) + validate_crd_spec(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate_kind(new)
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec.get("scope") != new_spec.get("scope"):
            errs.append(invalid("spec.scope", new_spec.get("scope"), "field is immutable"))
        return errs


def _default(crd: Obj) -> None:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})


def validate_crd_spec(crd: Obj) -> list[FieldError]:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    errs: list[FieldError] = []
    group, names = spec.get("group"), spec.get("names") if isinstance(spec.get("names"), dict) else {}
    assert isinstance(names, dict)
    name = (crd.get("metadata") or {}).get("name")
    if name and f"{names.get('plural')}.{group}" != name:
        errs.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(required("spec.group"))
    elif not isinstance(group, str) or not DNS1123_SUBDOMAIN.match(group):
        errs.append(invalid("spec.group", group, "a lowercase RFC 1123 subdomain must consist of lower case "
                            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                            "character"))
    elif "." not in group:
        errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope")
    if not scope:
        errs.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    errs += _validate_names(names)
    errs += _validate_versions(spec.get("versions"))
    return errs


def _validate_names(names: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    for field in ("plural", "singular"):
        value = names.get(field)
        if not value:
            errs.append(required(f"spec.names.{field}"))
        elif not isinstance(value, str) or not _DNS1035.match(value):
            errs.append(invalid(f"spec.names.{field}", value, _DNS1035_MSG))
    for i, short in enumerate(names.get("shortNames") or []):
        if not isinstance(short, str) or not _DNS1035.match(short):
            errs.append(invalid(f"spec.names.shortNames[{i}]", short, _DNS1035_MSG))
    for field in ("kind", "listKind"):
        value = names.get(field)
        if not value:
            errs.append(required(f"spec.names.{field}"))
        elif not isinstance(value, str) or not _DNS1035.match(value.lower()):
            errs.append(invalid(f"spec.names.{field}", value, _DNS1035_MSG))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(invalid("spec.names.listKind", names.get("listKind"), "kind and listKind may not be the same"))
    return errs


def _validate_versions(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [required("spec.versions", "must have exactly one version marked as storage version")]
    errs: list[FieldError] = []
    seen: list[str] = []
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            errs.append(invalid(path, version, "must be an object"))
            continue
        name = version.get("name")
        if not name:
            errs.append(required(f"{path}.name"))
        elif not isinstance(name, str) or not _DNS1035.match(name):
            errs.append(invalid(f"{path}.name", name, _DNS1035_MSG))
        elif name in seen:
            errs.append(duplicate(f"{path}.name", name))
        else:
            seen.append(name)
        storage += 1 if version.get("storage") is True else 0
        errs += _validate_version(version, path)
    if storage != 1:
        errs.append(invalid("spec.versions", [v.get("name") for v in versions if isinstance(v, dict)],
                            "must have exactly one version marked as storage version"))
    return errs


def _validate_version(version: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for flag in ("served", "storage"):
        if not isinstance(version.get(flag), bool):
            errs.append(required(f"{path}.{flag}"))
    schema = (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) \
        else None
    spath = f"{path}.schema.openAPIV3Schema"
    if not isinstance(schema, dict):
        errs.append(required(spath, "schemas are required"))
    else:
        if schema.get("type") != "object":
            errs.append(required(f"{spath}.type", "must not be empty at the root") if not schema.get("type")
                        else invalid(f"{spath}.type", schema.get("type"), "must be object at the root"))
        errs += _structural_errors(schema, spath)
        errs += cel.compile_errors(schema, spath)
    for i, column in enumerate(version.get("additionalPrinterColumns") or []):
        cpath = f"{path}.additionalPrinterColumns[{i}]"
        if not isinstance(column, dict):
            errs.append(invalid(cpath, column, "must be an object"))
            continue
        if not column.get("name"):
            errs.append(required(f"{cpath}.name"))
        if column.get("type") not in _COLUMN_TYPES:
            errs.append(not_supported(f"{cpath}.type", column.get("type"), _COLUMN_TYPES))
        if not column.get("jsonPath"):
            errs.append(required(f"{cpath}.jsonPath"))
    scale = ((version.get("subresources") or {}) if isinstance(version.get("subresources"), dict) else {}).get("scale")
    if isinstance(scale, dict):
        for field, root in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
            value = scale.get(field)
            if not value:
                errs.append(required(f"{path}.subresources.scale.{field}"))
            elif not str(value).startswith(root):
                errs.append(invalid(f"{path}.subresources.scale.{field}", value,
                                    f"should be a json path under {root.rstrip('.')}"))
    return errs


def _structural_errors(schema: Obj, path: str) -> list[FieldError]:
    """Fields of a structural schema that must say their type (upstream's structural schema rule)."""
    errs: list[FieldError] = []
    for key, child in (schema.get("properties") or {}).items():
        cpath = f"{path}.properties[{key}]"
        if not isinstance(child, dict):
            continue
        if not child.get("type") and not child.get("x-kubernetes-int-or-string") \
                and not child.get("x-kubernetes-preserve-unknown-fields"):
            errs.append(required(f"{cpath}.type", "must not be empty for specified object fields"))
        errs += _structural_errors(child, cpath)
    items = schema.get("items")
    if isinstance(items, dict):
        if not items.get("type") and not items.get("x-kubernetes-int-or-string") \
                and not items.get("x-kubernetes-preserve-unknown-fields"):
            errs.append(required(f"{path}.items.type", "must not be empty for specified array items"))
        errs += _structural_errors(items, f"{path}.items")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        errs += _structural_errors(extra, f"{path}.additionalProperties")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
        except re.error as e:
            errs.append(invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {e}"))
    return errs
