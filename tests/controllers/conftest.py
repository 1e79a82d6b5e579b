"""Makes `tests.controllers.builders` importable whatever pytest's import mode, and gives
tests a raw HTTPS client as the admin (`admin_http`) and a controller-manager on the module's
API server (`manager`), whose log is printed when it did not stop cleanly.

The test folders have no `__init__.py` (a `tests/controllers` package would shadow the real
`controllers`), so the helpers are imported by their full dotted name from the checkout root.
"""

from __future__ import annotations

import signal
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

from kube.testing.apiserver import ApiServerHarness  # noqa: E402
from kube.testing.process import Process  # noqa: E402


@pytest.fixture(scope="module")
def admin_http(api: ApiServerHarness) -> Iterator[httpx.Client]:
    """Raw requests as the admin against the module's API server, verified against the cluster CA."""
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {api.token('admin')}"}, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def manager(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    proc = api.controller_manager(log_path=tmp_path_factory.mktemp("cm") / "controller-manager.log").start()
    try:
        yield proc
    finally:
        code = proc.stop()
        if code not in (0, None, -signal.SIGKILL):
            sys.stderr.write(f"--- controller-manager log ---\n{proc.log()[-20000:]}\n")
        assert code in (0, None, -signal.SIGKILL), f"controller-manager exited with {code}"
