"""The Deployment controller (pkg/controller/deployment)."""

from controllers.deployment.controller import DeploymentController
from controllers.deployment.util import compute_hash

__all__ = ["DeploymentController", "compute_hash"]
