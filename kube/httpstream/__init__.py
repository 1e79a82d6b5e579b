"""HTTP upgrades served by proxying bytes: the API server's half of exec, attach, port-forward and proxy.

Kubernetes' streaming subresources are HTTP/1.1 upgrades (to WebSocket or SPDY/3.1) that
the API server does not speak: it authenticates and authorizes the request like any other,
then relays the upgrade request to the backend (a kubelet, a pod) and copies bytes both ways
until both sides are done, as apimachinery's UpgradeAwareHandler does.

- `UpgradeProtocol` (server.py): uvicorn's h11 protocol, changed so that a request asking to
  upgrade (any `Upgrade` token, with `Connection: upgrade`) still reaches the ASGI app as an
  ordinary `http` request, with one ASGI extension: `scope["extensions"][UPGRADE]["take"]()`
  hands the app the raw connection (`SocketStream`) once it decides to relay. An app that
  answers normally instead (a 401, 403 or 404 Status) is written out and the connection closed.
- `relay` (relay.py): copy both directions between two connections, with backpressure and
  half-close, never holding more than one read in memory.
- `send_head` and `proxy_upgrade` (proxy.py): replay a request head to a backend and read its
  status (an unreachable backend can still be answered with an error), then take the client's
  connection and relay.
"""

from kube.httpstream.proxy import HOP_BY_HOP, BackendError, proxy_upgrade, request_head, send_head
from kube.httpstream.relay import relay
from kube.httpstream.server import UPGRADE, UpgradeProtocol, is_upgrade, take_connection
from kube.httpstream.stream import SocketStream

__all__ = ["UPGRADE", "UpgradeProtocol", "SocketStream", "relay", "proxy_upgrade", "request_head",
           "BackendError", "is_upgrade", "take_connection", "HOP_BY_HOP", "send_head"]
