"""Kubernetes' protobuf envelope: `k8s\\x00` then a `runtime.Unknown` around the object.

Mirrors apimachinery's runtime/serializer/protobuf. The envelope's `typeMeta` names the
object's apiVersion and kind (the object's own message carries neither); `raw` is the
object's message. `decode_object` turns a body into the JSON dict the JSON decoder would
produce for the same object (kind and apiVersion first, as Go writes them); `encode_object`
is its inverse, for answering clients that prefer protobuf.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError, Message

from apiserver.openapi.schema import definition_for_gvk
from apiserver.protobuf.descriptors import message_class, message_for_definition
from apiserver.protobuf.json_mapping import from_json, to_json

__all__ = ["MAGIC", "MEDIA_TYPE", "ProtobufError", "decode_object"]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"


class ProtobufError(ValueError):
    """The body is not a Kubernetes protobuf object this server knows."""


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _message_for(api_version: str, kind: str) -> type[Message] | None:
    group, version = _group_version(api_version)
    definition = definition_for_gvk(group, version, kind)
    return message_for_definition(definition) if definition else None


def encode_object(obj: dict[str, Any]) -> bytes | None:
    """`obj` (with apiVersion and kind) as a protobuf body, or None when its kind has no message;
    ProtobufError when a value does not fit its field."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    cls = _message_for(api_version, kind)
    if cls is None:
        return None
    msg = cls()
    try:
        from_json(obj, msg)
    except (TypeError, ValueError, AttributeError) as e:
        raise ProtobufError(f"the {kind} cannot be written as protobuf: {e}") from None
    envelope: Any = message_class(_UNKNOWN)(raw=msg.SerializeToString(deterministic=True))
    envelope.typeMeta.apiVersion, envelope.typeMeta.kind = api_version, kind
    serialized: bytes = envelope.SerializeToString(deterministic=True)
    return MAGIC + serialized


def decode_object(body: bytes) -> dict[str, Any]:
    """The object in a protobuf body as a JSON dict; ProtobufError for anything else."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    try:
        envelope: Any = message_class(_UNKNOWN).FromString(body[len(MAGIC):])
    except DecodeError as e:
        raise ProtobufError(f"the protobuf envelope cannot be decoded: {e}") from None
    if envelope.contentEncoding:
        raise ProtobufError(f"unsupported content encoding {envelope.contentEncoding!r}")
    api_version, kind = envelope.typeMeta.apiVersion, envelope.typeMeta.kind
    cls = _message_for(api_version, kind)
    if cls is None:
        raise ProtobufError(f'no protobuf message for kind "{kind}" in version "{api_version}"')
    try:
        obj = to_json(cls.FromString(envelope.raw))
    except DecodeError as e:
        raise ProtobufError(f"the {kind} in the body cannot be decoded: {e}") from None
    return {"kind": kind, "apiVersion": api_version, **obj}
