"""A pod's dnsPolicy and dnsConfig are validated as upstream's validatePodDNSConfig does:
every error at once, in a 422 with upstream's field paths and wording."""

from __future__ import annotations

from typing import Any

import httpx

from tests.apiserver.conftest import causes


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def test_dns_policy_none_needs_a_dns_config_with_a_nameserver(c: httpx.Client, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    got = causes(c.post(path, json=_pod("a", dnsPolicy="None")))
    assert got == {"spec.dnsConfig": "Required value: must provide `dnsConfig` when `dnsPolicy` is None"}
    got = causes(c.post(path, json=_pod("b", dnsPolicy="None", dnsConfig={"searches": ["example.com"]})))
    assert got == {"spec.dnsConfig.nameservers":
                   "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"}
    got = causes(c.post(path, json=_pod("c", dnsPolicy="Sometimes")))
    assert got["spec.dnsPolicy"] == ('Unsupported value: "Sometimes": supported values: "ClusterFirst", '
                                     '"ClusterFirstWithHostNet", "Default", "None"')
    ok = c.post(path, json=_pod("d", dnsPolicy="None", dnsConfig={
        "nameservers": ["1.1.1.1"], "searches": ["example.com."], "options": [{"name": "ndots", "value": "2"}]}))
    assert ok.status_code == 201, ok.text
    assert ok.json()["spec"]["dnsConfig"]["options"] == [{"name": "ndots", "value": "2"}]


def test_every_dns_config_error_at_once(c: httpx.Client, ns: str) -> None:
    config = {"nameservers": ["1.1.1.1", "8.8.8.8", "9.9.9.9", "not-an-ip"],
              "searches": [f"s{i}.example.com" for i in range(32)] + ["Bad_Domain"],
              "options": [{"value": "1"}]}
    got = causes(c.post(f"/api/v1/namespaces/{ns}/pods", json=_pod("bad", dnsConfig=config)))
    assert got["spec.dnsConfig.nameservers"] == ('Invalid value: []string{"1.1.1.1", "8.8.8.8", "9.9.9.9", '
                                                 '"not-an-ip"}: must not have more than 3 nameservers')
    assert got["spec.dnsConfig.nameservers[3]"] == ('Invalid value: "not-an-ip": must be a valid IP address, '
                                                    '(e.g. 10.9.8.7 or 2001:db8::ffff)')
    assert got["spec.dnsConfig.searches"].endswith("must not have more than 32 search paths")
    assert got["spec.dnsConfig.searches[32]"].startswith('Invalid value: "Bad_Domain": a lowercase RFC 1123 subdomain')
    assert got["spec.dnsConfig.options[0]"] == "Required value: must not be empty"
    assert c.get(f"/api/v1/namespaces/{ns}/pods/bad").status_code == 404
