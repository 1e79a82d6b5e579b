"""The Kubernetes API's protobuf messages, loaded from the descriptors upstream compiled.

`descriptors.binpb` (written by `hack/extract_descriptors.py` from kubectl's embedded
`generated.proto` descriptors) is loaded once into a private descriptor pool; message classes
come from `message_factory`. Besides the messages, this answers what the JSON mapping needs
and protobuf itself does not say: which fields are Go values rather than pointers (gogo's
`nullable=false`, kept in the descriptors as unknown option fields). A value field is always
on the wire, so its zero value means "unset", while a pointer field on the wire was set.
Read-only after loading; safe to share.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from google.protobuf import (
    descriptor,
    descriptor_pb2,
    descriptor_pool,
    message,
    message_factory,
    unknown_fields,
)

__all__ = ["is_value_field", "message_class", "message_for_definition", "pool"]

_PATH = Path(__file__).with_name("descriptors.binpb")
_GOGO_NULLABLE = 65001


def _descriptor_set() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString(_PATH.read_bytes())


@cache
def pool() -> descriptor_pool.DescriptorPool:
    """A pool holding every file of the descriptor set (files are added in dependency order)."""
    result = descriptor_pool.DescriptorPool()
    files = {f.name: f for f in _descriptor_set().file}
    added: set[str] = set()

    def add(name: str) -> None:
        if name in added:
            return
        for dep in files[name].dependency:
            add(dep)
        result.Add(files[name])
        added.add(name)

    for name in sorted(files):
        add(name)
    return result


@cache
def _value_fields() -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()

    def walk(prefix: str, m: descriptor_pb2.DescriptorProto) -> None:
        full = f"{prefix}.{m.name}"
        for f in m.field:
            if any(u.field_number == _GOGO_NULLABLE and u.data == 0
                   for u in unknown_fields.UnknownFieldSet(f.options)):
                found.add((full, f.name))
        for nested in m.nested_type:
            walk(full, nested)

    for fd in _descriptor_set().file:
        for m in fd.message_type:
            walk(fd.package, m)
    return frozenset(found)


def is_value_field(field: descriptor.FieldDescriptor) -> bool:
    """True when the Go field is a value (`nullable=false`), not a pointer."""
    return (field.containing_type.full_name, field.name) in _value_fields()


@cache
def message_class(full_name: str) -> type[message.Message]:
    """The generated class of `k8s.io.api.core.v1.Pod`; KeyError when the pool lacks it."""
    cls: type[message.Message] = message_factory.GetMessageClass(pool().FindMessageTypeByName(full_name))
    return cls


def message_for_definition(definition: str) -> type[message.Message] | None:
    """The message of an OpenAPI definition name (`io.k8s.api.apps.v1.Deployment`), if any."""
    if not definition.startswith("io.k8s."):
        return None
    try:
        return message_class("k8s.io." + definition[len("io.k8s."):])
    except KeyError:
        return None
