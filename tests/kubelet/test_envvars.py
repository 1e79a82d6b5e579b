"""A container's environment as the kubelet builds it: `$(VAR)` expansion with upstream's rules,
envFrom with prefixes and invalid names, key references (optional or required) and the
downward API's fields and resources."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kube.api import Pod, Service
from kube.errors import NotFound
from kubelet.envvars import ContainerConfigError, EnvContext, expand_command, make_environment
from kubelet.expansion import expand
from kubelet.pod_objects import PodObjects
from kubelet.service_env import service_env

CONTEXT = {"A": "alpha", "EMPTY": ""}


@pytest.mark.parametrize(("text", "want"), [
    ("$(A)", "alpha"),
    ("x-$(A)-y", "x-alpha-y"),
    ("$(UNKNOWN)", "$(UNKNOWN)"),
    ("$$(A)", "$(A)"),
    ("$$$(A)", "$alpha"),
    ("$$", "$"),
    ("$A", "$A"),
    ("$(A", "$(A"),
    ("$", "$"),
    ("tail$", "tail$"),
    ("$(EMPTY)x", "x"),
    ("$()", "$()"),
])
def test_expand_follows_upstream_rules(text: str, want: str) -> None:
    assert expand(text, CONTEXT) == want


class FakeAPI:
    """The two object kinds the kubelet reads, answered from dicts (as the API server's GET)."""

    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects

    async def request(self, method: str, path: str, *, body: Any = None) -> Any:
        name = path.rsplit("/", 1)[-1]
        plural = path.rsplit("/", 2)[-2]
        found = self.objects.get(f"{plural}/{name}")
        if found is None:
            raise NotFound(f'{plural} "{name}" not found')
        return found


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


API = FakeAPI({
    "configmaps/app": {"data": {"MODE": "fast", "1BAD": "x", "good.key": "y"}, "binaryData": {"BLOB": _b64("b")}},
    "secrets/creds": {"data": {"PASSWORD": _b64("s3cret")}},
})


def _pod(container: dict[str, Any]) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"app": "a"}},
                               "spec": {"nodeName": "n1", "containers": [{"name": "main", **container}]}})


async def _env(container: dict[str, Any], warnings: list[tuple[str, str]] | None = None) -> dict[str, str]:
    pod = _pod(container)
    sink = warnings if warnings is not None else []
    ctx = EnvContext(PodObjects(API), pod_ip="10.0.0.5", host_ip="192.168.1.2",
                     allocatable={"cpu": "4", "memory": "8Gi"}, warn=lambda r, m: sink.append((r, m)))
    return await make_environment(pod, pod.spec.containers[0], ctx)


async def test_values_from_config_map_secret_and_fields() -> None:
    env = await _env({"env": [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "PASSWORD"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "URL", "value": "http://$(POD_IP):80/$(MODE)/$(LATER)"},
        {"name": "LATER", "value": "l"},
    ]})
    assert env == {"MODE": "fast", "PASSWORD": "s3cret", "POD_IP": "10.0.0.5", "APP": "a",
                   "URL": "http://10.0.0.5:80/fast/$(LATER)", "LATER": "l"}


async def test_env_from_with_prefix_skips_invalid_names_with_a_warning() -> None:
    warnings: list[tuple[str, str]] = []
    env = await _env({"envFrom": [{"configMapRef": {"name": "app"}},
                                  {"prefix": "S_", "secretRef": {"name": "creds"}},
                                  {"configMapRef": {"name": "absent", "optional": True}}],
                      "env": [{"name": "MODE", "value": "override"}]}, warnings)
    assert env == {"MODE": "override", "good.key": "y", "S_PASSWORD": "s3cret"}
    assert warnings == [("InvalidEnvironmentVariableNames",
                         "Keys [1BAD] from the EnvFrom configMap ns/app were skipped since they are considered "
                         "invalid environment variable names.")]


@pytest.mark.parametrize(("ref", "message"), [
    ({"configMapKeyRef": {"name": "absent", "key": "k"}}, 'configmap "absent" not found'),
    ({"secretKeyRef": {"name": "absent", "key": "k"}}, 'secret "absent" not found'),
    ({"configMapKeyRef": {"name": "app", "key": "nope"}}, "couldn't find key nope in ConfigMap ns/app"),
    ({"configMapKeyRef": {"name": "app", "key": "BLOB"}}, "couldn't find key BLOB in ConfigMap ns/app"),
    ({"secretKeyRef": {"name": "creds", "key": "nope"}}, "couldn't find key nope in Secret ns/creds"),
])
async def test_missing_required_source_or_key_is_a_config_error(ref: dict[str, Any], message: str) -> None:
    with pytest.raises(ContainerConfigError) as caught:
        await _env({"env": [{"name": "X", "valueFrom": ref}]})
    assert str(caught.value) == message
    optional = {kind: {**sel, "optional": True} for kind, sel in ref.items()}
    assert await _env({"env": [{"name": "X", "valueFrom": optional}]}) == {}


async def test_missing_env_from_source_is_a_config_error() -> None:
    with pytest.raises(ContainerConfigError, match='secret "gone" not found'):
        await _env({"envFrom": [{"secretRef": {"name": "gone"}}]})


async def test_resource_field_refs_use_divisor_and_default_to_allocatable() -> None:
    env = await _env({"resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "250m", "memory": "32Mi"}},
                      "env": [
                          {"name": "MEM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                                "divisor": "1Mi"}}},
                          {"name": "CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                          {"name": "CPU_REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}}},
                          {"name": "CPU_REQ_M", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                                                   "divisor": "1m"}}},
                          {"name": "MEM_REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory"}}},
                      ]})
    assert env == {"MEM_MI": "64", "CPU_LIMIT": "4", "CPU_REQ": "1", "CPU_REQ_M": "250",
                   "MEM_REQ": str(32 * 1024 * 1024)}


def test_command_and_args_expand_against_the_environment() -> None:
    pod = _pod({"command": ["sh", "-c", "echo $(GREETING) $$(GREETING) $(MISSING)"], "args": ["$(GREETING)"]})
    assert expand_command(pod.spec.containers[0], {"GREETING": "hi"}) == (
        ("sh", "-c", "echo hi $(GREETING) $(MISSING)"), ("hi",))


def test_service_variables_follow_upstream_names() -> None:
    services = [Service.model_validate({"metadata": {"name": "kubernetes", "namespace": "default"},
                                        "spec": {"clusterIP": "10.96.0.1",
                                                 "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}}),
                Service.model_validate({"metadata": {"name": "my-db", "namespace": "ns"},
                                        "spec": {"clusterIP": "10.96.0.7", "ports": [{"port": 5432}]}}),
                Service.model_validate({"metadata": {"name": "headless", "namespace": "ns"},
                                        "spec": {"clusterIP": "None", "ports": [{"port": 80}]}})]
    assert service_env("ns", enable_service_links=True, services=services) == {
        "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
        "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
        "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
        "MY_DB_SERVICE_HOST": "10.96.0.7", "MY_DB_SERVICE_PORT": "5432", "MY_DB_PORT": "tcp://10.96.0.7:5432",
        "MY_DB_PORT_5432_TCP": "tcp://10.96.0.7:5432", "MY_DB_PORT_5432_TCP_PROTO": "tcp",
        "MY_DB_PORT_5432_TCP_PORT": "5432", "MY_DB_PORT_5432_TCP_ADDR": "10.96.0.7"}


async def test_service_variables_come_last_and_may_be_referred_to() -> None:
    pod = _pod({"env": [{"name": "DB", "value": "$(MY_DB_SERVICE_HOST):5432"}, {"name": "MY_DB_SERVICE_PORT",
                                                                               "value": "mine"}]})
    ctx = EnvContext(PodObjects(API), pod_ip=None, host_ip="h", allocatable={}, warn=lambda r, m: None,
                     service_env={"MY_DB_SERVICE_HOST": "10.96.0.7", "MY_DB_SERVICE_PORT": "5432"})
    assert await make_environment(pod, pod.spec.containers[0], ctx) == {
        "DB": "10.96.0.7:5432", "MY_DB_SERVICE_PORT": "mine", "MY_DB_SERVICE_HOST": "10.96.0.7"}
