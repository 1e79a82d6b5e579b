"""picokube's proxy (kube-proxy): one per node, it makes cluster IPs and NodePorts reach endpoints.

It watches Services and EndpointSlices, computes which endpoints each service port may send
new connections to (`model`), and programs the node's iptables as kube-proxy's iptables mode
does (`iptables/`), or, simulated, only reports what it would program (`backend`);
`proxier` is the control loop and `__main__` the process. It imports only the shared
library `kube`.
"""

from proxy.backend import Backend, IptablesBackend, Programmed, SimulatedBackend
from proxy.config import ProxyConfig
from proxy.model import Endpoint, ProxyModel, ServicePort, ServicePortName, build_model

__all__ = [
    "Backend",
    "Endpoint",
    "IptablesBackend",
    "Programmed",
    "ProxyConfig",
    "ProxyModel",
    "ServicePort",
    "ServicePortName",
    "SimulatedBackend",
    "build_model",
]
