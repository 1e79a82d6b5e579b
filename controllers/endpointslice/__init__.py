"""The EndpointSlice controller (pkg/controller/endpointslice)."""

from controllers.endpointslice.controller import EndpointSliceController
from controllers.endpointslice.desired import CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME
from controllers.endpointslice.reconciler import SlicePlan, plan_slices

__all__ = ["CONTROLLER_NAME", "LABEL_MANAGED_BY", "LABEL_SERVICE_NAME", "EndpointSliceController", "SlicePlan",
           "plan_slices"]
