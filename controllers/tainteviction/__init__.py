"""The taint eviction controller (NoExecute taints)."""

from controllers.tainteviction.controller import TaintEvictionController

__all__ = ["TaintEvictionController"]
