"""Services and their endpoints: strategies, validation, cluster IP and node port allocation."""

from apiserver.registry.service.strategy import EndpointSliceStrategy, EndpointsStrategy, ServiceStrategy

__all__ = ["EndpointSliceStrategy", "EndpointsStrategy", "ServiceStrategy"]
