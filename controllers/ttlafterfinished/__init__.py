"""The TTL-after-finished controller (pkg/controller/ttlafterfinished)."""

from controllers.ttlafterfinished.controller import TTLAfterFinishedController

__all__ = ["TTLAfterFinishedController"]
