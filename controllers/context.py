"""What the manager hands every controller: its config, its client, the shared informers, clocks.

Mirrors kube-controller-manager's ControllerContext. Each controller gets its own
RESTClient, whose field manager is `<controller-name>-controller`, while all of them share
one InformerFactory, so a process keeps one watch per resource however many controllers
read it. A controller registers its informers and handlers when it is built; the manager
starts the informers afterwards and runs the controller only once every cache has synced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from controllers.config import ControllerManagerConfig
from kube.cache import InformerFactory
from kube.client import RESTClient
from kube.clock import Clock

__all__ = ["Controller", "ControllerBuilder", "ControllerContext"]


@dataclass(frozen=True)
class ControllerContext:
    config: ControllerManagerConfig
    client: RESTClient
    informers: InformerFactory
    clock: Clock
    """Monotonic time for backoff, expectations and requeues."""
    now: Callable[[], datetime]
    """Wall-clock time (UTC), for comparing with timestamps the API holds."""


class Controller(Protocol):
    async def run(self) -> None:
        """Reconcile until cancelled; caches have synced before this is called."""


ControllerBuilder = Callable[[ControllerContext], Controller]
