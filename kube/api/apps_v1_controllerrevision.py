"""apps/v1 ControllerRevision: an immutable snapshot of a workload's template, numbered.

StatefulSets keep their history in them (`kubectl rollout history sts/x`); `data` holds the
patch that restores the template, kept as it came.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from kube.api.base import KubeObject
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["ControllerRevision"]


def _info() -> ResourceInfo:
    found = resource_for_kind("apps/v1", "ControllerRevision")
    assert found is not None
    return found


class ControllerRevision(KubeObject):
    info: ClassVar[ResourceInfo] = _info()
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    data: dict[str, Any] | None = None
    revision: int = 0
