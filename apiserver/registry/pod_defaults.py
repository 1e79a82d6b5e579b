"""Defaults of a pod spec, wherever one appears (a Pod, a Deployment's or ReplicaSet's template).

Mirrors SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Probe, SetDefaults_HTTPGetAction,
SetDefaults_Volume and the volume sources' default modes in k8s.io/kubernetes/pkg/apis/core/v1,
plus the declarative defaults of the core types (a container port's protocol). Two facts of
Go's encoding are reproduced too, so a stored spec reads as upstream's does: a container's
`resources` struct is always present (`resources: {}`), as is the pod's `securityContext`.
The fields only a Pod gets (requests copied from limits, `enableServiceLinks`, host ports
under host networking) are in `default_pod_only`: upstream keeps them out of templates so a
template's hash does not change. Values of the wrong type are left for validation to report;
a default never overwrites a value.
"""

from __future__ import annotations

from typing import Any

__all__ = ["default_pod_only", "default_pod_spec", "image_pull_policy"]

Obj = dict[str, Any]

_CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_MODE_0644 = 0o644
_VOLUME_SOURCES = frozenset({
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
})


def _set(obj: Obj, key: str, value: Any) -> None:
    """Default a string field: Go cannot tell an empty string from a missing one."""
    if obj.get(key) in (None, ""):
        obj[key] = value


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(parent: Obj, key: str) -> Obj | None:
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def image_pull_policy(image: Any) -> str:
    """Always for an image tagged `latest` or untagged (and not pinned by digest), else IfNotPresent."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    last = text.rsplit("/", 1)[-1]
    return "Always" if ":" not in last or last.endswith(":latest") else "IfNotPresent"


def _default_http_get(handler: Obj | None) -> None:
    http_get = _dict(handler, "httpGet") if handler is not None else None
    if http_get is not None:
        _set(http_get, "path", "/")
        _set(http_get, "scheme", "HTTP")


def _default_probe(probe: Obj) -> None:
    for field, value in _PROBE_DEFAULTS.items():
        if probe.get(field) in (None, 0):
            probe[field] = value
    _default_http_get(probe)


def _default_env(container: Obj) -> None:
    for env in _dicts(container.get("env")):
        source = _dict(env, "valueFrom")
        field_ref = _dict(source, "fieldRef") if source is not None else None
        if field_ref is not None:
            _set(field_ref, "apiVersion", "v1")


def _default_container(c: Obj) -> None:
    _set(c, "imagePullPolicy", image_pull_policy(c.get("image")))
    _set(c, "terminationMessagePath", "/dev/termination-log")
    _set(c, "terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in _dicts(c.get("ports")):
        _set(port, "protocol", "TCP")
    for name in _PROBES:
        if (probe := _dict(c, name)) is not None:
            _default_probe(probe)
    if (lifecycle := _dict(c, "lifecycle")) is not None:
        for hook in ("postStart", "preStop"):
            _default_http_get(_dict(lifecycle, hook))
    _default_env(c)


def _default_projection(projected: Obj) -> None:
    projected.setdefault("defaultMode", _MODE_0644)
    for source in _dicts(projected.get("sources")):
        if (token := _dict(source, "serviceAccountToken")) is not None:
            token.setdefault("expirationSeconds", 3600)
        if (downward := _dict(source, "downwardAPI")) is not None:
            for item in _dicts(downward.get("items")):
                if (field_ref := _dict(item, "fieldRef")) is not None:
                    _set(field_ref, "apiVersion", "v1")


def _default_volume(volume: Obj) -> None:
    if not any(key in _VOLUME_SOURCES for key in volume):
        volume["emptyDir"] = {}
    for source in ("secret", "configMap", "downwardAPI"):
        if (value := _dict(volume, source)) is not None:
            value.setdefault("defaultMode", _MODE_0644)
    if (downward := _dict(volume, "downwardAPI")) is not None:
        for item in _dicts(downward.get("items")):
            if (field_ref := _dict(item, "fieldRef")) is not None:
                _set(field_ref, "apiVersion", "v1")
    if (projected := _dict(volume, "projected")) is not None:
        _default_projection(projected)
    if (host_path := _dict(volume, "hostPath")) is not None:
        host_path.setdefault("type", "")


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and everything nested in it, for a pod or a pod template's spec."""
    _set(spec, "restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for field in _CONTAINER_FIELDS:
        for container in _dicts(spec.get(field)):
            _default_container(container)
    for volume in _dicts(spec.get("volumes")):
        _default_volume(volume)


def default_pod_only(spec: Obj) -> None:
    """SetDefaults_Pod: what a Pod gets beyond its spec's defaults (never a template)."""
    for field in ("initContainers", "containers"):
        for container in _dicts(spec.get(field)):
            resources = _dict(container, "resources")
            limits = _dict(resources, "limits") if resources is not None else None
            if resources is None or not limits:
                continue
            requests = resources.setdefault("requests", {})
            if isinstance(requests, dict):
                for name, value in limits.items():
                    requests.setdefault(name, value)
    spec.setdefault("enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for field in ("initContainers", "containers"):
            for container in _dicts(spec.get(field)):
                for port in _dicts(container.get("ports")):
                    if port.get("hostPort") in (None, 0) and port.get("containerPort") is not None:
                        port["hostPort"] = port.get("containerPort")
