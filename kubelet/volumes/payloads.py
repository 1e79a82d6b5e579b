"""The files of configMap, secret, downwardAPI and projected volumes, computed from the API.

Mirrors the payload functions of pkg/volume/configmap, secret, downwardapi and projected:
- without `items`, every key becomes a file of that name; with `items`, only those keys,
  at their paths; a key that is missing fails the volume (`configmap references
  non-existent config key: k`) unless the source is optional;
- a missing source fails the volume with the kubelet's message (`configmap "x" not found`)
  unless it is optional, in which case it contributes no files;
- each file's mode is the item's `mode`, else the volume's `defaultMode`, else 0644;
- downwardAPI files hold the field's or resource's text (`kubelet.downward_api`);
- a projected serviceAccountToken source writes a token for the pod's service account,
  bound to the pod, with the source's audience and expiry (default 1 h, at least 10 min).
Every failure raises `VolumeError`, whose text follows "MountVolume.SetUp failed for volume".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from kube.api import (
    ConfigMapVolumeSource,
    DownwardAPIVolumeFile,
    KeyToPath,
    Pod,
    ProjectedVolumeSource,
    SecretVolumeSource,
)
from kube.errors import ApiError
from kubelet.downward_api import field_value, resource_value
from kubelet.pod_objects import PodObjects, SourceNotFound
from kubelet.volumes.atomic_writer import FileProjection

__all__ = ["DEFAULT_MODE", "PayloadContext", "VolumeError", "config_map_payload", "downward_api_payload",
           "projected_payload", "secret_payload"]

DEFAULT_MODE = 0o644
_TOKEN_DEFAULT_EXPIRY = 3600
_TOKEN_MIN_EXPIRY = 600

Payload = dict[str, FileProjection]
Reader = Callable[[str, str], Awaitable[dict[str, bytes]]]


class VolumeError(Exception):
    """A volume cannot be set up (yet); str() is the reason."""


class PayloadContext:
    """What building payloads needs besides the pod: the objects, addresses and the node's allocatable."""

    def __init__(self, objects: PodObjects, *, pod_ip: str | None, host_ip: str,
                 allocatable: Mapping[str, str]) -> None:
        self.objects, self.pod_ip, self.host_ip, self.allocatable = objects, pod_ip, host_ip, allocatable


async def _keyed(read: Reader, *, namespace: str, name: str, items: list[KeyToPath] | None, optional: bool,
                 default_mode: int, missing_key: str) -> Payload:
    try:
        data = await read(namespace, name)
    except SourceNotFound as e:
        if optional:
            return {}
        raise VolumeError(str(e)) from e
    if not items:
        return {key: FileProjection(value, default_mode) for key, value in data.items()}
    payload: Payload = {}
    for item in items:
        if item.key not in data:
            if optional:
                continue
            raise VolumeError(f"{missing_key}: {item.key}")
        payload[item.path] = FileProjection(data[item.key], item.mode if item.mode is not None else default_mode)
    return payload


async def config_map_payload(pod: Pod, source: ConfigMapVolumeSource, ctx: PayloadContext) -> Payload:
    mode = source.default_mode if source.default_mode is not None else DEFAULT_MODE
    return await _keyed(ctx.objects.config_map, namespace=str(pod.metadata.namespace), name=source.name,
                        items=source.items, optional=bool(source.optional), default_mode=mode,
                        missing_key="configmap references non-existent config key")


async def secret_payload(pod: Pod, source: SecretVolumeSource, ctx: PayloadContext) -> Payload:
    mode = source.default_mode if source.default_mode is not None else DEFAULT_MODE
    return await _keyed(ctx.objects.secret, namespace=str(pod.metadata.namespace), name=source.secret_name,
                        items=source.items, optional=bool(source.optional), default_mode=mode,
                        missing_key="secret references non-existent secret key")


def downward_api_payload(pod: Pod, items: list[DownwardAPIVolumeFile] | None, default_mode: int,
                         ctx: PayloadContext) -> Payload:
    payload: Payload = {}
    for item in items or []:
        try:
            if item.field_ref is not None:
                text = field_value(pod, item.field_ref.field_path, pod_ip=ctx.pod_ip, host_ip=ctx.host_ip)
            elif item.resource_field_ref is not None:
                ref = item.resource_field_ref
                container = next((c for c in pod.spec.containers if c.name == ref.container_name), None)
                if container is None:
                    raise ValueError(f"container {ref.container_name} not found")
                text = resource_value(ref, container, ctx.allocatable)
            else:
                continue
        except ValueError as e:
            raise VolumeError(str(e)) from e
        payload[item.path] = FileProjection(text.encode(), item.mode if item.mode is not None else default_mode)
    return payload


async def projected_payload(pod: Pod, source: ProjectedVolumeSource, ctx: PayloadContext) -> Payload:
    mode = source.default_mode if source.default_mode is not None else DEFAULT_MODE
    ns = str(pod.metadata.namespace)
    payload: Payload = {}
    for s in source.sources or []:
        if s.config_map is not None:
            payload.update(await _keyed(ctx.objects.config_map, namespace=ns, name=s.config_map.name,
                                        items=s.config_map.items, optional=bool(s.config_map.optional),
                                        default_mode=mode, missing_key="configmap references non-existent config key"))
        if s.secret is not None:
            payload.update(await _keyed(ctx.objects.secret, namespace=ns, name=s.secret.name, items=s.secret.items,
                                        optional=bool(s.secret.optional), default_mode=mode,
                                        missing_key="secret references non-existent secret key"))
        if s.downward_api is not None:
            payload.update(downward_api_payload(pod, s.downward_api.items, mode, ctx))
        if s.service_account_token is not None:
            sat = s.service_account_token
            expiry = max(sat.expiration_seconds or _TOKEN_DEFAULT_EXPIRY, _TOKEN_MIN_EXPIRY)
            try:
                token = await ctx.objects.service_account_token(pod, audience=sat.audience or "",
                                                                expiration_seconds=expiry)
            except (ApiError, SourceNotFound) as e:
                raise VolumeError(f"failed to fetch token: {e}") from e
            payload[sat.path] = FileProjection(token.token.encode(), mode)
    return payload
