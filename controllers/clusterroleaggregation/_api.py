"""The rbac.authorization.k8s.io/v1 ClusterRole as this controller reads and writes it.

Only the fields aggregation touches are declared (rules, aggregationRule); the rest
round-trips through the models' `extra="allow"`, so an update never drops what others set.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["AggregationRule", "ClusterRole", "PolicyRule"]



def _info() -> ResourceInfo:
    found = resource_for_kind("rbac.authorization.k8s.io/v1", "ClusterRole")
    assert found is not None
    return found


class PolicyRule(KubeModel):
    verbs: list[str] = Field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_ur_ls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class AggregationRule(KubeModel):
    cluster_role_selectors: list[dict[str, object]] | None = None


class ClusterRole(KubeObject):
    info: ClassVar[ResourceInfo] = _info()
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None
