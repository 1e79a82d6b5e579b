"""The StatefulSet controller (pkg/controller/statefulset)."""

from controllers.statefulset.controller import StatefulSetController

__all__ = ["StatefulSetController"]
