"""The Endpoints controller (pkg/controller/endpoint)."""

from controllers.endpoint.controller import EndpointsController
from controllers.endpoint.subsets import MAX_CAPACITY, OVER_CAPACITY_ANNOTATION, desired_subsets

__all__ = ["MAX_CAPACITY", "OVER_CAPACITY_ANNOTATION", "EndpointsController", "desired_subsets"]
