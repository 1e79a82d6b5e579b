"""The pod garbage collector."""

from controllers.podgc.controller import PodGCController

__all__ = ["PodGCController"]
