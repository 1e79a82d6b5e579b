"""exec, attach and port-forward on the kubelet: the streaming endpoints and their protocols.

The API server proxies `pods/exec`, `pods/attach` and `pods/portforward` byte for byte to the
pod's kubelet, at upstream's URLs on the kubelet's HTTPS server (the one `pods/log` reaches,
with the same client-certificate check):

    /exec/{namespace}/{pod}/{container}?command=..&command=..&input=1&output=1&error=1&tty=1
    /attach/{namespace}/{pod}/{container}?input=1&output=1&error=1&tty=1
    /portForward/{namespace}/{pod}[?port=80,443]  (port is required with WebSocket)

THE HOOK: `KubeletServer(..., streaming=handler)` hands every such request, before anything
is answered, to one `StreamingHandler`:

    async def handler(request: StreamRequest, stream: SocketStream) -> None

- `request` (see `target.StreamRequest`): `kind` ("exec" | "attach" | "portforward"),
  `namespace`, `pod`, `container` ("" for port-forward), `query` (parse_qs: every value of
  each parameter, e.g. `query["command"]`), `headers` (lower-case names, every value), and
  `head`: the request line and headers exactly as received, ending in the blank line, so the
  request can be replayed byte for byte to another server.
- `stream` (`transport.SocketStream`): the client's connection, still before any response;
  `stream.reader` / `stream.writer` are the asyncio streams (any bytes the client sent after
  the head are already in the reader), `send()` / `receive()` / `aclose()` wrap them.
- The handler owns the connection: it answers (an HTTP error, or the 101 and then the
  protocol) and closes it; when it returns the connection is closed regardless. It is run as
  its own task per connection, cancelled at shutdown.

Simulated nodes use `ProtocolStreamingHandler(SimulatedStreamingRuntime(runtime))`, which
speaks the protocols itself (WebSocket channel protocols v1-v5, the port-forward channel and
SPDY-tunnel protocols, SPDY/3.1 with remotecommand v1-v4 and portforward.k8s.io). A real
node's handler, `CRIStreamingHandler(RemoteRuntime)`, instead asks the CRI runtime for a
streaming URL (Exec/Attach/PortForward) and relays `request.head` and then both directions
of `stream` to it (`kube.httpstream.relay`), so the runtime's streaming server speaks the protocols. `write_http_error`
answers a refused request as Go's http.Error does.
"""

from collections.abc import Awaitable, Callable

from kubelet.streaming.cri import CRIStreamingHandler
from kubelet.streaming.handler import ProtocolStreamingHandler, StreamingRuntime
from kubelet.streaming.http import streaming_http_protocol
from kubelet.streaming.portforward import PortConnection, PortForwardError
from kubelet.streaming.process_io import ProcessIO, TerminalSize
from kubelet.streaming.remotecommand import ExecError
from kubelet.streaming.target import StreamRequest, StreamTarget, TargetError
from kubelet.streaming.transport import SocketStream, write_http_error

__all__ = [
    "StreamingHandler", "StreamRequest", "SocketStream", "write_http_error", "streaming_http_protocol",
    "ProtocolStreamingHandler", "StreamingRuntime", "CRIStreamingHandler", "StreamTarget", "TargetError",
    "ProcessIO", "TerminalSize", "ExecError", "PortConnection", "PortForwardError",
]

StreamingHandler = Callable[[StreamRequest, SocketStream], Awaitable[None]]
"""Serves one streaming request on its connection; see the module docstring."""
