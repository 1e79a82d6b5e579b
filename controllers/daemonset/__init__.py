"""The DaemonSet controller (pkg/controller/daemon)."""

from controllers.daemonset.controller import DaemonSetsController

__all__ = ["DaemonSetsController"]
