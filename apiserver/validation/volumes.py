"""Pod volumes and the containers' volume mounts, as ValidateVolumes and ValidateVolumeMounts.

Why here: the kubelet mounts what a pod names, so a mount of an undeclared volume, a volume
with no source or two, or a subPath escaping its volume must be refused when the pod is
created, in Kubernetes' words, not discovered later on a node. Guarantees:
- every volume has a unique DNS-1123 label name and exactly one source; a configMap names its
  ConfigMap, a secret its secretName, a persistentVolumeClaim its claimName, a hostPath its
  path (projected sources are checked by `validation.projected`);
- every mount names a declared volume and a mountPath unique within its container; subPath is
  a relative path that never climbs out (`..`), and not together with subPathExpr.
"""

from __future__ import annotations

from typing import Any

from apiserver.validation.field import duplicate, forbidden, invalid, required
from apiserver.validation.network import check_dns1123_label
from apiserver.validation.projected import validate_local_non_reserved_path
from kube.errors import FieldError

__all__ = ["validate_volume_mounts", "validate_volumes"]

_NAMED_BY = {"configMap": "name", "secret": "secretName", "persistentVolumeClaim": "claimName", "hostPath": "path"}


def validate_volumes(errs: list[FieldError], path: str, volumes: Any) -> set[str]:
    """Check `spec.volumes`; return the names declared (for the mounts to refer to)."""
    names: set[str] = set()
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        at = f"{path}[{i}]"
        if not isinstance(volume, dict):
            errs.append(invalid(at, volume, "must be an object"))
            continue
        name = volume.get("name")
        if not name:
            errs.append(required(f"{at}.name"))
        else:
            check_dns1123_label(errs, f"{at}.name", name)
            if name in names:
                errs.append(duplicate(f"{at}.name", name))
            names.add(str(name))
        sources = [k for k, v in volume.items() if k != "name" and v is not None]
        if not sources:
            errs.append(required(at, "must specify a volume type"))
        for extra in sources[1:]:
            errs.append(forbidden(f"{at}.{extra}", "may not specify more than 1 volume type"))
        for kind, field in _NAMED_BY.items():
            source = volume.get(kind)
            if isinstance(source, dict) and not source.get(field):
                errs.append(required(f"{at}.{kind}.{field}"))
    return names


def validate_volume_mounts(errs: list[FieldError], path: str, mounts: Any, volumes: set[str]) -> None:
    """Check one container's `volumeMounts` against the pod's declared `volumes`."""
    paths: set[str] = set()
    for i, mount in enumerate(mounts if isinstance(mounts, list) else []):
        at = f"{path}[{i}]"
        if not isinstance(mount, dict):
            errs.append(invalid(at, mount, "must be an object"))
            continue
        name = mount.get("name")
        if not name:
            errs.append(required(f"{at}.name"))
        elif name not in volumes:
            errs.append(FieldError(f"{at}.name", f'Not found: "{name}"', reason="FieldValueNotFound"))
        mount_path = mount.get("mountPath")
        if not mount_path:
            errs.append(required(f"{at}.mountPath"))
        elif mount_path in paths:
            errs.append(invalid(f"{at}.mountPath", mount_path, "must be unique"))
        else:
            paths.add(str(mount_path))
        if mount.get("subPath"):
            if mount.get("subPathExpr"):
                errs.append(invalid(f"{at}.subPathExpr", mount["subPathExpr"],
                                    "subPathExpr and subPath are mutually exclusive"))
            validate_local_non_reserved_path(errs, f"{at}.subPath", mount["subPath"])
