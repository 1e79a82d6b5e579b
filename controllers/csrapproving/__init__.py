"""The csrapproving controller."""

from controllers.csrapproving.controller import CSRApprovingController

__all__ = ["CSRApprovingController"]
