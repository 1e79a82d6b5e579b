"""The disruption controller (PodDisruptionBudget status)."""

from controllers.disruption.controller import DisruptionController

__all__ = ["DisruptionController"]
