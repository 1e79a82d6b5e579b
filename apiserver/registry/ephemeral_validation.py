"""Validation of a pod's ephemeral containers, on their own and as a pods/ephemeralcontainers update.

Mirrors pkg/apis/core/validation validateEphemeralContainers and
ValidatePodEphemeralContainersUpdate, with upstream's field paths and words:
- each ephemeral container gets the checks of any container (a DNS-1123 label name, an
  image, a known imagePullPolicy, named env), and its name is unique across containers,
  initContainers and ephemeralContainers (`Duplicate value`);
- `targetContainerName`, when set, names a container or init container (`Not found`);
- the fields upstream keeps off its allow list (ports, resources, probes, lifecycle,
  restartPolicy, resizePolicy) and volume mount subPath/subPathExpr are `Forbidden: cannot be
  set for an Ephemeral Container`; a field counts as set when it is not Go's zero value, so
  the defaulted `resources: {}` is not;
- a pod is never created with ephemeral containers; through the subresource they may be
  added, never removed or changed (the check is by name, as a patch may reorder them).
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.pod_validation import validate_container
from apiserver.validation.field import forbidden, go_value
from kube.errors import FieldError

__all__ = ["validate_ephemeral_containers", "validate_ephemeral_containers_create",
           "validate_ephemeral_containers_update"]

Obj = dict[str, Any]
_PATH = "spec.ephemeralContainers"
_CANNOT_SET = "cannot be set for an Ephemeral Container"
_DISALLOWED_FIELDS = ("ports", "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
                      "restartPolicy", "resizePolicy")


def _items(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _is_set(value: Any) -> bool:
    return value not in (None, "", {}, [], False, 0)


def _check_one(errs: list[FieldError], path: str, ec: Obj, *, seen: set[str], targets: set[str]) -> None:
    validate_container(errs, path, {k: v for k, v in ec.items() if k not in _DISALLOWED_FIELDS}, seen)
    target = ec.get("targetContainerName")
    if _is_set(target) and target not in targets:
        errs.append(FieldError(f"{path}.targetContainerName", f"Not found: {go_value(target)}",
                               reason="FieldValueNotFound"))
    for field in _DISALLOWED_FIELDS:
        if _is_set(ec.get(field)):
            errs.append(forbidden(f"{path}.{field}", _CANNOT_SET))
    for i, mount in enumerate(_items(ec.get("volumeMounts"))):
        for field in ("subPath", "subPathExpr"):
            if _is_set(mount.get(field)):
                errs.append(forbidden(f"{path}.volumeMounts[{i}].{field}", _CANNOT_SET))


def validate_ephemeral_containers(spec: Obj) -> list[FieldError]:
    """Every error in `spec.ephemeralContainers` of a pod spec (none when there are none)."""
    errs: list[FieldError] = []
    others = {c.get("name") for field in ("containers", "initContainers") for c in _items(spec.get(field))}
    targets = {n for n in others if isinstance(n, str)}
    seen = set(targets)
    for i, ec in enumerate(_items(spec.get("ephemeralContainers"))):
        _check_one(errs, f"{_PATH}[{i}]", ec, seen=seen, targets=targets)
    return errs


def validate_ephemeral_containers_create(spec: Obj) -> list[FieldError]:
    """ValidatePodCreate's rule: ephemeral containers are only ever added to an existing pod."""
    if _items(spec.get("ephemeralContainers")):
        return [forbidden(_PATH, "cannot be set on create")]
    return []


def validate_ephemeral_containers_update(new: Obj, old: Obj) -> list[FieldError]:
    """What a pods/ephemeralcontainers write may not do: remove or change an existing one."""
    new_by_name = {ec.get("name"): ec for ec in _items((new.get("spec") or {}).get("ephemeralContainers"))}
    errs: list[FieldError] = []
    for ec in _items((old.get("spec") or {}).get("ephemeralContainers")):
        name = str(ec.get("name"))
        if name not in new_by_name:
            errs.append(forbidden(_PATH, f"existing ephemeral containers {go_value(name)} may not be removed\n"))
        elif new_by_name[name] != ec:
            errs.append(forbidden(_PATH, f"existing ephemeral containers {go_value(name)} may not be changed\n"))
    return errs
