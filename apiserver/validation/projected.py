"""Projected volume validation: the sources of a `projected` volume, with upstream's paths and words.

Mirrors pkg/apis/core/validation's validateProjectedVolumeSource and what it calls
(validateKeyToPath, validateDownwardAPIVolumeFile, ValidateLocalNonReservedPath). Every
error is returned at once:
- `defaultMode`, and every item's `mode`, between 0 and 0777;
- each source names exactly one kind (secret, configMap, downwardAPI, serviceAccountToken);
- secret and configMap sources name their object; their items have a key and a relative
  path with no `..` element; downwardAPI items have such a path and exactly one of fieldRef
  (apiVersion and a supported fieldPath) and resourceFieldRef (containerName and resource);
- serviceAccountToken: expirationSeconds between ten minutes and 2^32 seconds, and a path;
- no two sources write the same path ("conflicting duplicate paths").
Upstream reports a downwardAPI item's errors at `...sources[i].downwardAPI`, without the
item's index, and a duplicate path at the volume's `projected`; so does this. The volume the
ServiceAccount admission plugin adds passes.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.validation.field import forbidden, invalid, not_supported, required
from apiserver.validation.network import check_qualified_name
from kube.errors import FieldError

__all__ = ["validate_local_non_reserved_path", "validate_projected_volume"]

Obj = dict[str, Any]
FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
_SOURCE_KINDS = ("secret", "configMap", "downwardAPI", "serviceAccountToken", "clusterTrustBundle")
_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid")
_RESOURCES = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
              "requests.ephemeral-storage", "requests.memory")
_SUBSCRIPTED = re.compile(r"^(metadata\.(?:labels|annotations))\['(.*)'\]$")


def validate_local_non_reserved_path(errs: list[FieldError], path: str, value: Any) -> None:
    """A relative path with no `..` element, not starting with `..` (upstream's ValidateLocalNonReservedPath)."""
    if not isinstance(value, str):
        return
    if value.startswith("/"):
        errs.append(invalid(path, value, "must be a relative path"))
    if ".." in value.split("/"):
        errs.append(invalid(path, value, "must not contain '..'"))
    elif value.startswith(".."):
        errs.append(invalid(path, value, "must not start with '..'"))


def _mode(errs: list[FieldError], path: str, mode: Any) -> None:
    if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o777):
        errs.append(invalid(path, mode, FILE_MODE_MSG))


def _key_to_path(errs: list[FieldError], path: str, item: Obj) -> None:
    if not item.get("key"):
        errs.append(required(f"{path}.key"))
    if not item.get("path"):
        errs.append(required(f"{path}.path"))
    validate_local_non_reserved_path(errs, f"{path}.path", item.get("path"))
    _mode(errs, f"{path}.mode", item.get("mode"))


def _field_ref(errs: list[FieldError], path: str, ref: Obj) -> None:
    if not ref.get("apiVersion"):
        errs.append(required(f"{path}.apiVersion"))
        return
    field_path = ref.get("fieldPath")
    if not field_path:
        errs.append(required(f"{path}.fieldPath"))
        return
    subscripted = _SUBSCRIPTED.match(str(field_path))
    if subscripted:
        key = subscripted.group(2)
        check_qualified_name(errs, path, key.lower() if subscripted.group(1).endswith("annotations") else key)
    elif field_path not in _FIELD_PATHS:
        errs.append(not_supported(f"{path}.fieldPath", field_path, _FIELD_PATHS))


def _downward_file(errs: list[FieldError], path: str, item: Obj) -> None:
    """validateDownwardAPIVolumeFile; `path` is the source's, as upstream reports it."""
    if not item.get("path"):
        errs.append(required(f"{path}.path"))
    validate_local_non_reserved_path(errs, f"{path}.path", item.get("path"))
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, dict):
        _field_ref(errs, f"{path}.fieldRef", field_ref)
        if resource_ref is not None:
            errs.append(invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
    elif isinstance(resource_ref, dict):
        if not resource_ref.get("containerName"):
            errs.append(required(f"{path}.resourceFieldRef.containerName"))
        resource = resource_ref.get("resource")
        if not resource:
            errs.append(required(f"{path}.resourceFieldRef.resource"))
        elif resource not in _RESOURCES and not str(resource).startswith(("limits.hugepages-", "requests.hugepages-")):
            errs.append(not_supported(f"{path}.resourceFieldRef.resource", resource, _RESOURCES))
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    _mode(errs, f"{path}.mode", item.get("mode"))


def _token(errs: list[FieldError], path: str, volume_path: str, token: Obj) -> None:
    expiration = token.get("expirationSeconds")
    if isinstance(expiration, int) and expiration < 600:
        errs.append(invalid(f"{path}.expirationSeconds", expiration, "may not specify a duration less than 10 "
                                                                      "minutes"))
    if isinstance(expiration, int) and expiration > 1 << 32:
        errs.append(invalid(f"{path}.expirationSeconds", expiration, "may not specify a duration larger than 2^32 "
                                                                      "seconds"))
    if not token.get("path"):
        errs.append(required(f"{volume_path}.path"))
    else:
        validate_local_non_reserved_path(errs, f"{volume_path}.path", token.get("path"))


def _object_source(errs: list[FieldError], path: str, volume_path: str, source: Obj, seen: set[str]) -> None:
    if not source.get("name"):
        errs.append(required(f"{path}.name"))
    for i, item in enumerate(source.get("items") or []):
        if not isinstance(item, dict):
            continue
        _key_to_path(errs, f"{path}.items[{i}]", item)
        _claim_path(errs, volume_path, item.get("path"), source.get("name"), seen)


def _claim_path(errs: list[FieldError], volume_path: str, target: Any, shown: Any, seen: set[str]) -> None:
    if not target:
        return
    if target in seen:
        errs.append(invalid(volume_path, shown, "conflicting duplicate paths"))
    seen.add(target)


def validate_projected_volume(errs: list[FieldError], path: str, projected: Any) -> None:
    """Append the errors of one `projected` volume source found at `path` (`spec.volumes[0].projected`)."""
    if not isinstance(projected, dict):
        return
    _mode(errs, f"{path}.defaultMode", projected.get("defaultMode"))
    seen: set[str] = set()
    for i, source in enumerate(projected.get("sources") or []):
        if not isinstance(source, dict):
            continue
        src_path = f"{path}.sources[{i}]"
        kinds = [k for k in _SOURCE_KINDS if source.get(k) is not None]
        for kind in ("secret", "configMap"):
            if isinstance(source.get(kind), dict):
                _object_source(errs, f"{src_path}.{kind}", path, source[kind], seen)
        if isinstance(source.get("downwardAPI"), dict):
            for item in source["downwardAPI"].get("items") or []:
                if isinstance(item, dict):
                    _downward_file(errs, f"{src_path}.downwardAPI", item)
                    _claim_path(errs, path, item.get("path"), item.get("path"), seen)
        if isinstance(source.get("serviceAccountToken"), dict):
            _token(errs, f"{src_path}.serviceAccountToken", path, source["serviceAccountToken"])
        if len(kinds) > 1:
            errs.append(forbidden(src_path, "may not specify more than 1 volume type per source"))
