"""core/v1 pieces of a pod that name what it consumes: env sources, volumes and volume mounts.

Only what the kubelet reads is declared (configMap, secret, downwardAPI, projected, emptyDir,
hostPath, and the claim a persistentVolumeClaim volume names); other volume sources
round-trip through `extra="allow"`, so a pod carrying them is stored unchanged.
"""

from __future__ import annotations

from pydantic import Field

from kube.api.base import KubeModel

__all__ = [
    "ConfigMapEnvSource", "ConfigMapKeySelector", "ConfigMapProjection", "ConfigMapVolumeSource",
    "DownwardAPIProjection", "DownwardAPIVolumeFile", "DownwardAPIVolumeSource", "EmptyDirVolumeSource",
    "EnvFromSource", "KeyToPath", "PersistentVolumeClaimVolumeSource",
    "ProjectedVolumeSource", "ResourceFieldSelector", "SecretEnvSource", "SecretKeySelector", "SecretProjection",
    "SecretVolumeSource", "ServiceAccountTokenProjection", "Volume", "VolumeMount", "VolumeProjection",
    "VolumeFieldSelector",
]


class ConfigMapKeySelector(KubeModel):
    name: str = ""
    key: str
    optional: bool | None = None


class SecretKeySelector(KubeModel):
    name: str = ""
    key: str
    optional: bool | None = None


class ResourceFieldSelector(KubeModel):
    """`limits.cpu`, `requests.memory`, ... of one container, in units of `divisor` (default 1)."""

    container_name: str | None = None
    resource: str
    divisor: str | int | None = None


class ConfigMapEnvSource(KubeModel):
    name: str = ""
    optional: bool | None = None


class SecretEnvSource(KubeModel):
    name: str = ""
    optional: bool | None = None


class EnvFromSource(KubeModel):
    prefix: str | None = None
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


class KeyToPath(KubeModel):
    key: str
    path: str
    mode: int | None = None


class ConfigMapVolumeSource(KubeModel):
    name: str = ""
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


class SecretVolumeSource(KubeModel):
    secret_name: str = ""
    items: list[KeyToPath] | None = None
    default_mode: int | None = None
    optional: bool | None = None


class VolumeFieldSelector(KubeModel):
    field_path: str
    api_version: str | None = None


class DownwardAPIVolumeFile(KubeModel):
    path: str
    field_ref: VolumeFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    mode: int | None = None


class DownwardAPIVolumeSource(KubeModel):
    items: list[DownwardAPIVolumeFile] | None = None
    default_mode: int | None = None


class ConfigMapProjection(KubeModel):
    name: str = ""
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class SecretProjection(KubeModel):
    name: str = ""
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class DownwardAPIProjection(KubeModel):
    items: list[DownwardAPIVolumeFile] | None = None


class ServiceAccountTokenProjection(KubeModel):
    path: str
    audience: str | None = None
    expiration_seconds: int | None = None


class VolumeProjection(KubeModel):
    config_map: ConfigMapProjection | None = None
    secret: SecretProjection | None = None
    downward_api: DownwardAPIProjection | None = Field(default=None, alias="downwardAPI")
    service_account_token: ServiceAccountTokenProjection | None = None


class ProjectedVolumeSource(KubeModel):
    sources: list[VolumeProjection] | None = None
    default_mode: int | None = None


class EmptyDirVolumeSource(KubeModel):
    medium: str | None = None
    size_limit: str | None = None


class HostPathVolumeSource(KubeModel):
    """Not exported: kube.api's HostPathVolumeSource is the PersistentVolume source of the same shape."""

    path: str
    type: str | None = None


class PersistentVolumeClaimVolumeSource(KubeModel):
    claim_name: str
    read_only: bool | None = None


class Volume(KubeModel):
    name: str
    config_map: ConfigMapVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    downward_api: DownwardAPIVolumeSource | None = Field(default=None, alias="downwardAPI")
    projected: ProjectedVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None


class VolumeMount(KubeModel):
    name: str
    mount_path: str
    read_only: bool | None = None
    sub_path: str | None = None
    sub_path_expr: str | None = None
    mount_propagation: str | None = None
