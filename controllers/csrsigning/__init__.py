"""The csrsigning controller."""

from controllers.csrsigning.controller import CSRSigningController

__all__ = ["CSRSigningController"]
