"""Service environment variables: what a container learns of the `kubernetes` Service and its neighbours."""

from __future__ import annotations

from typing import Any

import pytest

from kube.api import Pod, Service
from kubelet.service_env import env_from_services, service_env, service_env_for_pod


def service(name: str, namespace: str, cluster_ip: str, *ports: dict[str, Any]) -> Service:
    return Service.model_validate({"metadata": {"name": name, "namespace": namespace},
                                   "spec": {"clusterIP": cluster_ip, "ports": list(ports) or [{"port": 80}]}})


KUBERNETES = service("kubernetes", "default", "10.96.0.1", {"name": "https", "port": 443, "protocol": "TCP"})


def test_the_kubernetes_service_gives_in_cluster_config_its_address() -> None:
    env = service_env("apps", enable_service_links=False, services=[KUBERNETES])
    assert env == {
        "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
        "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
        "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
        "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}


def test_service_links_name_the_namespaces_services_only_when_enabled() -> None:
    services = [KUBERNETES, service("my-db", "apps", "10.96.0.20", {"port": 5432}, {"name": "metrics", "port": 9187,
                                                                                    "protocol": "UDP"}),
                service("elsewhere", "other", "10.96.0.30"), service("headless", "apps", "None")]
    on = service_env("apps", enable_service_links=True, services=services)
    assert on["MY_DB_SERVICE_HOST"] == "10.96.0.20" and on["MY_DB_SERVICE_PORT"] == "5432"
    assert on["MY_DB_SERVICE_PORT_METRICS"] == "9187"
    assert on["MY_DB_PORT"] == "tcp://10.96.0.20:5432"
    assert on["MY_DB_PORT_9187_UDP"] == "udp://10.96.0.20:9187" and on["MY_DB_PORT_9187_UDP_PROTO"] == "udp"
    assert not any(k.startswith(("ELSEWHERE_", "HEADLESS_")) for k in on)
    off = service_env("apps", enable_service_links=False, services=services)
    assert not any(k.startswith("MY_DB_") for k in off) and off["KUBERNETES_SERVICE_HOST"] == "10.96.0.1"


@pytest.mark.parametrize(("spec", "links"), [({}, True), ({"enableServiceLinks": False}, False),
                                             ({"enableServiceLinks": True}, True)])
def test_a_pods_enable_service_links_decides(spec: dict[str, Any], links: bool) -> None:
    pod = Pod.model_validate({"metadata": {"name": "p", "namespace": "apps"},
                              "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}})
    env = service_env_for_pod(pod, [KUBERNETES, service("web", "apps", "10.96.0.5")])
    assert ("WEB_SERVICE_HOST" in env) is links and "KUBERNETES_SERVICE_HOST" in env


def test_ipv6_addresses_are_bracketed() -> None:
    env = dict(env_from_services([service("v6", "apps", "fd00::1", {"port": 80})]))
    assert env["V6_PORT"] == "tcp://[fd00::1]:80" and env["V6_SERVICE_HOST"] == "fd00::1"
