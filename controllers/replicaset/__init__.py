"""The ReplicaSet controller (pkg/controller/replicaset), which also runs ReplicationControllers."""

from controllers.replicaset.controller import ReplicaSetController, ReplicationManager
from controllers.replicaset.expectations import ControllerExpectations

__all__ = ["ControllerExpectations", "ReplicaSetController", "ReplicationManager"]
