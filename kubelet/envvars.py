"""A container's environment, and its command and args with `$(VAR)` expanded.

Mirrors kubelet_pods.go makeEnvironmentVariables and kuberuntime's
ExpandContainerCommandAndArgs:
- `envFrom` first, in order: every key of the ConfigMap or Secret, with the prefix; keys that
  are not valid variable names are skipped and reported once per source with an
  InvalidEnvironmentVariableNames warning; a missing optional source is skipped;
- then `env`, in order: a literal value is expanded against the variables defined so far;
  `valueFrom` reads a fieldRef, a resourceFieldRef (the container's own unless
  `containerName`), a configMapKeyRef or a secretKeyRef (a missing optional one is skipped,
  the variable left undefined);
- then the Service variables (`kubelet.service_links`) not defined otherwise; env values may
  refer to them;
- command and args are expanded against the whole environment.
A missing required source or key raises ContainerConfigError with upstream's message
(`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`): the kubelet reports it
as the container's CreateContainerConfigError and tries again later.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping

from kube.api import Container, EnvFromSource, EnvVar, Pod
from kubelet.downward_api import field_value, resource_value
from kubelet.expansion import expand
from kubelet.pod_objects import PodObjects, SourceNotFound

__all__ = ["ContainerConfigError", "EnvContext", "expand_command", "make_environment"]

_ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")

Warn = Callable[[str, str], None]
"""Records a warning event on the pod: (reason, message)."""


class ContainerConfigError(Exception):
    """The container cannot be configured yet (a missing ConfigMap, Secret or key)."""


class EnvContext:
    """What resolving a pod's variables needs besides the pod: objects, addresses, the node."""

    def __init__(self, objects: PodObjects, *, pod_ip: str | None, host_ip: str,
                 allocatable: Mapping[str, str], warn: Warn, service_env: Mapping[str, str] | None = None) -> None:
        self.objects, self.pod_ip, self.host_ip = objects, pod_ip, host_ip
        self.allocatable, self.warn = allocatable, warn
        self.service_env = dict(service_env or {})


async def make_environment(pod: Pod, container: Container, ctx: EnvContext) -> dict[str, str]:
    """The container's variables in definition order; raises ContainerConfigError."""
    env: dict[str, str] = {}
    for source in container.env_from or []:
        env.update(await _env_from(pod, source, ctx))
    for var in container.env or []:
        value = await _env_value(pod, container, var, env, ctx)
        if value is not None:
            env[var.name] = value
    for name, value in ctx.service_env.items():
        env.setdefault(name, value)
    return env


def expand_command(container: Container, env: Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(command, args) with every defined `$(VAR)` replaced."""
    return (tuple(expand(c, env) for c in container.command or ()),
            tuple(expand(a, env) for a in container.args or ()))


async def _env_from(pod: Pod, source: EnvFromSource, ctx: EnvContext) -> dict[str, str]:
    ns = str(pod.metadata.namespace)
    if source.config_map_ref is not None:
        kind, name, optional = "configMap", source.config_map_ref.name, bool(source.config_map_ref.optional)
        read = ctx.objects.config_map_data
    elif source.secret_ref is not None:
        kind, name, optional = "secret", source.secret_ref.name, bool(source.secret_ref.optional)
        read = ctx.objects.secret
    else:
        return {}
    try:
        data = await read(ns, name)
    except SourceNotFound as e:
        if optional:
            return {}
        raise ContainerConfigError(str(e)) from e
    values: dict[str, str] = {}
    invalid: list[str] = []
    for key, raw in data.items():
        full = (source.prefix or "") + key
        if _ENV_VAR_NAME.match(full):
            values[full] = raw.decode(errors="replace")
        else:
            invalid.append(full)
    if invalid:
        ctx.warn("InvalidEnvironmentVariableNames",
                 f"Keys [{', '.join(sorted(invalid))}] from the EnvFrom {kind} {ns}/{name} were skipped since "
                 f"they are considered invalid environment variable names.")
    return values


async def _env_value(pod: Pod, container: Container, var: EnvVar, defined: Mapping[str, str],
                     ctx: EnvContext) -> str | None:
    """The variable's value, or None when an optional source leaves it undefined."""
    source = var.value_from
    if var.value or source is None:
        return expand(var.value or "", defined, ctx.service_env)
    ns = str(pod.metadata.namespace)
    try:
        if source.field_ref is not None:
            return field_value(pod, source.field_ref.field_path, pod_ip=ctx.pod_ip, host_ip=ctx.host_ip)
        if source.resource_field_ref is not None:
            ref = source.resource_field_ref
            target = _container_named(pod, ref.container_name) if ref.container_name else container
            return resource_value(ref, target, ctx.allocatable)
    except ValueError as e:
        raise ContainerConfigError(str(e)) from e
    if source.config_map_key_ref is not None:
        cm_ref = source.config_map_key_ref
        return await _key(ctx.objects.config_map_data, ns=ns, name=cm_ref.name, key=cm_ref.key,
                          optional=bool(cm_ref.optional), kind="ConfigMap")
    if source.secret_key_ref is not None:
        s_ref = source.secret_key_ref
        return await _key(ctx.objects.secret, ns=ns, name=s_ref.name, key=s_ref.key,
                          optional=bool(s_ref.optional), kind="Secret")
    return ""


async def _key(read: Callable[[str, str], Awaitable[dict[str, bytes]]], *, ns: str, name: str, key: str, optional: bool,
               kind: str) -> str | None:
    try:
        data = await read(ns, name)
    except SourceNotFound as e:
        if optional:
            return None
        raise ContainerConfigError(str(e)) from e
    if key not in data:
        if optional:
            return None
        raise ContainerConfigError(f"couldn't find key {key} in {kind} {ns}/{name}")
    return data[key].decode(errors="replace")


def _container_named(pod: Pod, name: str) -> Container:
    for c in [*pod.spec.containers, *(pod.spec.init_containers or [])]:
        if c.name == name:
            return c
    raise ValueError(f"container {name} not found")
