"""pods/exec, pods/attach and pods/portforward: located here, spoken by the kubelet.

As upstream's ExecREST/AttachREST/PortForwardREST: the options (PodExecOptions,
PodAttachOptions, PodPortForwardOptions, from the query) are turned into the kubelet's
parameters, the container is chosen and checked, the pod's node gives the kubelet, and the
upgrade request is relayed to `/exec|/attach/{namespace}/{pod}/{container}` or
`/portForward/{namespace}/{pod}` on it over mutual TLS. Whatever protocol the client asked
for (WebSocket channel protocols, SPDY/3.1, the port-forward tunnel) is the kubelet's to
accept or refuse; the API server only carries bytes. A request that does not ask to upgrade
gets upstream's 400 `Upgrade request required`, after the pod and container are checked.

Authorization is upstream's: `create` on the subresource, whichever method the client used
(a WebSocket client must GET; kube-apiserver 1.31+ asks for `create` for those too).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind
from apiserver.registry.rest.kubelet_client import KubeletClient
from apiserver.registry.rest.upgrade import upgrade_to
from kube.errors import BadRequest
from kube.httpstream import is_upgrade

__all__ = ["PodStreamStorage", "StreamVerb", "parse_bool", "stream_container"]

StreamVerb = Literal["exec", "attach", "portforward"]

_OPTIONS_KIND = {"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}
_KUBELET_PATH = {"exec": "exec", "attach": "attach", "portforward": "portForward"}
_STREAM_PARAMS = (("stdin", "input"), ("stdout", "output"), ("stderr", "error"), ("tty", "tty"))
"""PodExecOptions/PodAttachOptions fields and the kubelet parameters they become."""
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(name: str, value: str) -> bool:
    """A boolean query parameter as Go's strconv.ParseBool reads it; BadRequest otherwise."""
    if value in _TRUE:
        return True
    if value in _FALSE or value == "":
        return False
    raise BadRequest(f'strconv.ParseBool: parsing "{value}": invalid syntax for query parameter "{name}"')


def _names(containers: Any) -> list[str]:
    return [str(c.get("name")) for c in containers or []]


def stream_container(pod: dict[str, Any], requested: str | None) -> str:
    """The container exec and attach reach, chosen and checked as upstream's streamLocation does."""
    spec, name = pod.get("spec") or {}, pod["metadata"]["name"]
    names, init = _names(spec.get("containers")), _names(spec.get("initContainers"))
    if requested:
        if requested not in names + init + _names(spec.get("ephemeralContainers")):
            raise BadRequest(f"container {requested} is not valid for pod {name}")
        return requested
    if len(names) == 1:
        return names[0]
    if not names:
        raise BadRequest(f"a container name must be specified for pod {name}")
    message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
    if init:
        message += f" or one of the init containers: [{' '.join(init)}]"
    raise BadRequest(message)


def _kubelet_params(verb: StreamVerb, request: Request) -> list[tuple[str, str]]:
    query = request.query_params
    if verb == "portforward":
        ports = [p for value in query.getlist("ports") for p in value.split(",") if p]
        for p in ports:
            if not p.isdigit() or not 0 < int(p) < 65536:
                raise BadRequest(f'unable to parse "{p}" as a port')
        return [("port", ",".join(ports))] if ports else []
    params = [(kubelet, "1") for option, kubelet in _STREAM_PARAMS
              if option in query and parse_bool(option, query[option])]
    if verb == "exec":
        params += [("command", c) for c in query.getlist("command")]
    return params


class PodStreamStorage:
    """One of pods/exec, pods/attach, pods/portforward, as a Connecter relaying to the kubelet."""

    connect_methods = ("GET", "POST")

    def __init__(self, verb: StreamVerb, pods: RegistryStore, nodes: RegistryStore, kubelet: KubeletClient) -> None:
        self.verb, self.pods, self.nodes, self.kubelet = verb, pods, nodes, kubelet
        self.kind = Kind("", "v1", _OPTIONS_KIND[verb])

    async def connect(self, ctx: Context, name: str, request: Request) -> Response:
        namespace = str(ctx.namespace)
        pod = await self.pods.get(namespace, name)
        path = f"/{_KUBELET_PATH[self.verb]}/{quote(namespace, safe='')}/{quote(name, safe='')}"
        if self.verb != "portforward":
            path += "/" + quote(stream_container(pod, request.query_params.get("container")), safe="")
        params = _kubelet_params(self.verb, request)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise BadRequest(f"pod {name} does not have a host assigned")
        if not is_upgrade(request.scope):
            raise BadRequest("Upgrade request required")
        address, port = await self.kubelet.node_endpoint(self.nodes, node)
        backend = await self.kubelet.connect(address, port)
        target = path + ("?" + urlencode(params) if params else "")
        return await upgrade_to(request, backend, target, host=f"{address}:{port}")
