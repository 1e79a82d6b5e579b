"""The ReplicaSet controller (pkg/controller/replicaset)."""

from controllers.replicaset.controller import ReplicaSetController
from controllers.replicaset.expectations import ControllerExpectations

__all__ = ["ControllerExpectations", "ReplicaSetController"]
