"""Mutating and validating admission for pod creates: ServiceAccount, DefaultTolerationSeconds,
Priority and LimitRanger, run in that order, as kube-apiserver's default chain does.

- ServiceAccount: a pod without `serviceAccountName` runs as `default`;
- DefaultTolerationSeconds: pods tolerate `node.kubernetes.io/not-ready` and `/unreachable`
  (NoExecute) for 300 s unless they say otherwise, so a brief node outage does not evict;
- Priority: `priorityClassName` resolves to `spec.priority` (and `preemptionPolicy`) from a
  PriorityClass or one of the two built-in system classes; without a name the
  `globalDefault` class applies, else 0. An unknown class, or a user-set `spec.priority` that
  disagrees, is 403 with upstream's message;
- LimitRanger: each `type: Container` LimitRange of the namespace fills missing requests and
  limits from `defaultRequest`/`default` and rejects (403) values outside `min`/`max`.
They change only the object being created; nothing is written elsewhere.
"""

from __future__ import annotations

from typing import Any, Mapping

from kube.errors import Forbidden, NotFound
from kube.quantity import parse_quantity
from apiserver.registry.generic import ListOptions, RegistryStore

__all__ = ["admit_pod", "SYSTEM_PRIORITY_CLASSES", "DEFAULT_TOLERATION_SECONDS"]

Obj = dict[str, Any]
DEFAULT_TOLERATION_SECONDS = 300
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
CACHED = ListOptions(resource_version="0")
"""Admission reads policy objects from the watch cache: no etcd round trip per pod create."""
_TAINT_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _forbidden(name: str, message: str) -> Forbidden:
    return Forbidden(f'pods "{name}" is forbidden: {message}', details={"name": name, "kind": "pods"})


def default_service_account(spec: Obj) -> None:
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    spec.setdefault("serviceAccount", spec["serviceAccountName"])


def default_tolerations(spec: Obj) -> None:
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    for key in _TAINT_KEYS:
        if any(isinstance(t, dict) and t.get("key") == key and t.get("effect") in (None, "", "NoExecute")
               for t in tolerations):
            continue
        if any(isinstance(t, dict) and not t.get("key") and t.get("operator") == "Exists" for t in tolerations):
            continue  # tolerates everything already
        tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                            "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


async def resolve_priority(name: str, spec: Obj, classes: RegistryStore) -> None:
    class_name = spec.get("priorityClassName")
    value: int | None = None
    policy: str | None = None
    if class_name:
        if class_name in SYSTEM_PRIORITY_CLASSES:
            value, policy = SYSTEM_PRIORITY_CLASSES[class_name], "PreemptLowerPriority"
        else:
            try:
                pc = await classes.get(None, str(class_name))
            except NotFound:
                raise _forbidden(name, f"no PriorityClass with name {class_name} was found") from None
            value, policy = int(pc.get("value", 0)), pc.get("preemptionPolicy") or "PreemptLowerPriority"
    else:
        listed = await classes.list(None, CACHED)
        default = next((pc for pc in listed.get("items") or [] if pc.get("globalDefault")), None)
        if default is not None:
            spec["priorityClassName"] = default["metadata"]["name"]
            value, policy = int(default.get("value", 0)), default.get("preemptionPolicy") or "PreemptLowerPriority"
        else:
            value = 0
    given = spec.get("priority")
    if given is not None and given != value:
        raise _forbidden(name, f"the integer value of priority ({given}) must not be provided in pod spec; "
                               f"priority admission controller computed {value} from the given PriorityClass name")
    spec["priority"] = value
    if policy:
        spec.setdefault("preemptionPolicy", policy)


def _containers(spec: Obj) -> list[Obj]:
    out = []
    for field in ("initContainers", "containers"):
        items = spec.get(field)
        if isinstance(items, list):
            out.extend(c for c in items if isinstance(c, dict))
    return out


def apply_limit_range(name: str, spec: Obj, limit_range: Obj) -> None:
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default: Mapping[str, str] = item.get("default") or {}
        default_request: Mapping[str, str] = item.get("defaultRequest") or {}
        for c in _containers(spec):
            resources = c.get("resources")
            if resources is None:
                resources = c["resources"] = {}
            if not isinstance(resources, dict):
                continue  # validation reports it
            limits = dict(resources.get("limits") or {})
            requests = dict(resources.get("requests") or {})
            for res, q in default.items():
                limits.setdefault(res, q)
            for res, q in default_request.items():
                requests.setdefault(res, q)
            for res, q in limits.items():
                requests.setdefault(res, q)  # a request defaults to its limit, as pod defaulting does
            if limits:
                resources["limits"] = limits
            if requests:
                resources["requests"] = requests
            _check_bounds(name, c, item)


def _check_bounds(name: str, container: Obj, item: Obj) -> None:
    resources = container.get("resources") or {}
    for kind, field, bound, compare in (("minimum", "requests", "min", lambda v, b: v < b),
                                        ("maximum", "limits", "max", lambda v, b: v > b)):
        for res, limit_q in (item.get(bound) or {}).items():
            have = (resources.get(field) or {}).get(res)
            if have is None:
                if bound == "max":
                    raise _forbidden(name, f"maximum {res} usage per Container is {limit_q}, but limit is "
                                           "unbounded")
                continue
            try:
                if compare(parse_quantity(str(have)), parse_quantity(str(limit_q))):
                    word = "request" if field == "requests" else "limit"
                    raise _forbidden(name, f"{kind} {res} usage per Container is {limit_q}, but {word} is {have}")
            except ValueError:
                continue  # validation reports the malformed quantity with its field path


async def admit_pod(name: str, namespace: str, body: Obj, stores: Mapping[str, RegistryStore]) -> None:
    """Run the pod admission plugins on `body` (a create) in place; Forbidden on a rejection."""
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return  # validation reports it
    default_service_account(spec)
    default_tolerations(spec)
    if "priorityclasses" in stores:
        await resolve_priority(name, spec, stores["priorityclasses"])
    if "limitranges" in stores:
        listed = await stores["limitranges"].list(namespace, CACHED)
        for lr in listed.get("items") or []:
            apply_limit_range(name, spec, lr)
