"""picokube's cluster DNS: Services and their endpoints by name, for every pod.

One process per cluster (`picokube dns`, `python -m clusterdns`). It watches Services and
EndpointSlices (`watcher`), builds the records of the cluster domain from them
(`records`), answers queries over UDP and TCP from that in-memory zone (`answer`,
`resolver`, `server`), forwards every other name to the host's resolvers (`forward`), and
publishes where it listens as the `kube-system/kube-dns` Service's endpoints (`publish`),
the address every pod's resolv.conf names. It imports only the shared library `kube`. The
package is not called `dns`, which is dnspython's, the wire-format library it is built on.
"""

from clusterdns.answer import Answer, answer_question
from clusterdns.config import ClusterDNSConfig
from clusterdns.forward import Forwarder, ForwardError, read_nameservers
from clusterdns.publish import KubeDNSPublisher
from clusterdns.records import Zone, build_zone
from clusterdns.resolver import ClusterResolver
from clusterdns.server import DNSServer

__all__ = [
    "Answer",
    "ClusterDNSConfig",
    "ClusterResolver",
    "DNSServer",
    "ForwardError",
    "Forwarder",
    "KubeDNSPublisher",
    "Zone",
    "answer_question",
    "build_zone",
    "read_nameservers",
]
