"""A pod's sandbox hostname: its spec.hostname or name, cut to 63 characters as the kubelet does."""

from __future__ import annotations

import pytest

from kubelet.hostname import pod_hostname


@pytest.mark.parametrize(("name", "spec_hostname", "want"), [
    ("web-0", None, "web-0"),
    ("web-0", "db", "db"),
    ("a" * 63, None, "a" * 63),
    ("a" * 70, None, "a" * 63),
    ("a" * 61 + "-.b" + "c" * 10, None, "a" * 61),
    ("x" * 62 + "." + "y" * 20, None, "x" * 62),
])
def test_pod_hostname(name: str, spec_hostname: str | None, want: str) -> None:
    assert pod_hostname(name, spec_hostname) == want
