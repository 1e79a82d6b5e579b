"""meta/v1 types shared by every kind: ObjectMeta, OwnerReference, LabelSelector, Condition."""

from __future__ import annotations

from pydantic import Field

from kube.api.base import KubeModel

__all__ = ["ObjectMeta", "OwnerReference", "LabelSelector", "LabelSelectorRequirement", "ListMeta",
           "ManagedFieldsEntry"]


class OwnerReference(KubeModel):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ManagedFieldsEntry(KubeModel):
    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None


class ObjectMeta(KubeModel):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None

    def controller_ref(self) -> OwnerReference | None:
        """The owner reference with `controller: true`, if any."""
        for ref in self.owner_references or []:
            if ref.controller:
                return ref
        return None


class ListMeta(KubeModel):
    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class LabelSelectorRequirement(KubeModel):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(KubeModel):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None
