"""The base of every wire model: camelCase on the wire, snake_case in Python, unknown fields kept.

Models keep fields they do not declare (`extra="allow"`), so a component that reads an object
and writes it back never drops what a newer client or another component set. `to_dict()` is
the wire form: aliases, no None values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from kube.resources import ResourceInfo

if TYPE_CHECKING:
    from kube.api.meta import ObjectMeta

__all__ = ["KubeModel", "KubeObject", "T_Object"]


class KubeModel(BaseModel):
    """A nested API structure (PodSpec, Container, ...)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase keys, None fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class KubeObject(KubeModel):
    """A top-level kind with apiVersion, kind and metadata; `info` says where it is served."""

    info: ClassVar[ResourceInfo]
    api_version: str | None = None
    kind: str | None = None
    if TYPE_CHECKING:
        # Every concrete kind declares `metadata` as a field itself (kube.api.meta imports this
        # module, so the field cannot live here); declared for the type checker only.
        metadata: ObjectMeta

    def model_post_init(self, __context: Any) -> None:
        if self.api_version is None:
            self.api_version = self.info.api_version
        if self.kind is None:
            self.kind = self.info.kind

    @property
    def key(self) -> str:
        """`namespace/name` (or `name` for cluster-scoped kinds), the cache and work-queue key."""
        meta = self.metadata
        return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)


T_Object = TypeVar("T_Object", bound=KubeObject)
