"""Objects that fit a schema of the OpenAPI document, more or less.

`instance(schema)` fills every required property and a random few optional ones, guessing
plausible strings from the property's name (a `name` is a DNS label, an `image` an image
reference, a time an RFC 3339 time) and using the well-known formats (quantities,
int-or-string, byte). The result is often valid for simple kinds and almost never for rich
ones; `seeds.py` supplies a valid start for those, and `mutations.py` makes both wrong.
Deterministic for a given `random.Random` state.
"""

from __future__ import annotations

import base64
import random
from typing import Any

__all__ = ["InstanceMaker", "dns_label"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_SPECIAL: dict[str, list[Any]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ["1", "100m", "1Gi", "0.5", "2", "512Mi", 1],
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": [1, 80, "25%", "http", "1"],
    _META + "Time": ["2024-01-02T03:04:05Z"],
    _META + "MicroTime": ["2024-01-02T03:04:05.123456Z"],
    "io.k8s.apimachinery.pkg.runtime.RawExtension": [{}, {"apiVersion": "v1", "kind": "ConfigMap"}],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": [1, "x", {"a": 1}],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps": [
        {"type": "object"}, {"type": "string"}, {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        {"type": "object", "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}}}],
    _META + "FieldsV1": [{}, {"f:metadata": {}}],
}
_WORDS = {"image": "busybox", "apiVersion": "v1", "kind": "ConfigMap", "protocol": "TCP", "operator": "In",
          "effect": "NoSchedule", "restartPolicy": "Always", "type": "Opaque", "addressType": "IPv4",
          "provisioner": "example.com/fuzz", "reclaimPolicy": "Delete", "volumeMode": "Filesystem",
          "resourceVersion": "", "uid": "", "ip": "10.0.0.1", "hostIP": "10.0.0.1", "podIP": "10.0.0.2",
          "clusterIP": "", "path": "/data", "mountPath": "/data", "apiGroup": "", "group": "",
          "schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "scope": "Namespaced",
          "podManagementPolicy": "OrderedReady", "accessModes": "ReadWriteOnce", "phase": "Pending"}


def dns_label(rnd: random.Random, prefix: str = "f") -> str:
    return f"{prefix}-{rnd.getrandbits(40):010x}"


class InstanceMaker:
    """Builds schema-shaped values from the document's definitions with one random stream."""

    def __init__(self, definitions: dict[str, Any], rnd: random.Random) -> None:
        self.definitions, self.rnd = definitions, rnd

    def of_definition(self, name: str, *, depth: int = 0) -> Any:
        if name in _SPECIAL:
            return self.rnd.choice(_SPECIAL[name])
        return self.instance(self.definitions.get(name, {}), depth=depth, field="")

    def instance(self, schema: dict[str, Any], *, depth: int, field: str) -> Any:
        """A value for `schema` found under property `field` (`depth` levels below the top)."""
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.of_definition(ref.removeprefix("#/definitions/"), depth=depth)
        if schema.get("allOf"):
            return self.instance(schema["allOf"][0], depth=depth, field=field)
        if schema.get("enum"):
            return self.rnd.choice(schema["enum"])
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            return self._object(schema, depth=depth)
        if kind == "array":
            count = self.rnd.choice([0, 1, 1, 2]) if depth < 6 else 0
            items = schema.get("items", {})
            return [self.instance(items, depth=depth + 1, field=field) for _ in range(count)]
        return self._scalar(kind, schema.get("format"), field)

    def _object(self, schema: dict[str, Any], *, depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        chance = 0.4 if depth < 2 else (0.15 if depth < 5 else 0.0)
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if name in ("status", "managedFields", "metadata") and name not in required:
                continue
            if name in required or self.rnd.random() < chance:
                out[name] = self.instance(sub, depth=depth + 1, field=name)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not props and depth < 6:
            for _ in range(self.rnd.choice([0, 1, 2])):
                out[dns_label(self.rnd, "k")] = self.instance(extra, depth=depth + 1, field="")
        return out

    def _scalar(self, kind: Any, fmt: Any, field: str) -> Any:
        if kind == "boolean":
            return self.rnd.random() < 0.5
        if kind == "integer":
            return self.rnd.choice([0, 1, 2, 3, 30])
        if kind == "number":
            return self.rnd.choice([0.5, 1.0, 0])
        if fmt == "byte":
            return base64.b64encode(b"fuzz").decode()
        if fmt == "int-or-string":
            return self.rnd.choice([1, "25%"])
        if fmt == "date-time":
            return "2024-01-02T03:04:05Z"
        if field in _WORDS:
            return _WORDS[field]
        return dns_label(self.rnd, "v")
