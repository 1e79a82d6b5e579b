"""`pkctl expose KIND/NAME --port P`: a Service in front of a workload's pods, as kubectl expose makes it.

The Service takes the workload's name (or `--name`), its labels, and as selector what picks
its pods: a Deployment's or ReplicaSet's `spec.selector.matchLabels`, a Pod's labels, a
Service's selector. Without `--port` the ports come from the pod template's container ports
(named `port-1`, `port-2`, ... when there are several); `targetPort` is `--target-port` or
the port itself. The server fills in the rest (cluster IP, node ports, defaults).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kubectl.context import CommandError, emit, one_target, resolve, run, state

__all__ = ["expose", "service_for"]

Obj = dict[str, Any]


def _selector(kind: str, obj: Obj) -> dict[str, str]:
    if kind == "Pod":
        labels = (obj.get("metadata") or {}).get("labels") or {}
    elif kind == "Service":
        labels = (obj.get("spec") or {}).get("selector") or {}
    else:
        selector = (obj.get("spec") or {}).get("selector") or {}
        if selector.get("matchExpressions"):
            raise CommandError("couldn't convert expressions - \"matchExpressions\" to map-based selector format")
        labels = selector.get("matchLabels") or {}
    if not labels:
        raise CommandError(f"couldn't retrieve selectors via --selector flag or introspection: the {kind.lower()} "
                           "has no selector")
    return dict(labels)


def _container_ports(kind: str, obj: Obj) -> list[Obj]:
    spec = obj.get("spec") or {}
    pod_spec = spec if kind == "Pod" else (spec.get("template") or {}).get("spec") or {}
    if kind == "Service":
        return [{"port": p.get("port"), "protocol": p.get("protocol")} for p in spec.get("ports") or []]
    return [{"port": p.get("containerPort"), "protocol": p.get("protocol")}
            for c in pod_spec.get("containers") or [] for p in c.get("ports") or []]


def service_for(kind: str, obj: Obj, *, port: int | None, target_port: str | None, service_type: str | None,
                name: str | None, protocol: str | None) -> Obj:
    """The Service `kubectl expose` would create for `obj` (a `kind`); CommandError when it cannot."""
    meta = obj.get("metadata") or {}
    if port is not None:
        ports: list[Obj] = [{"port": port, "protocol": protocol}]
    else:
        ports = [p for p in _container_ports(kind, obj) if p.get("port")]
        if not ports:
            raise CommandError("couldn't find port via --port flag or introspection")
    for i, p in enumerate(ports):
        if len(ports) > 1:
            p["name"] = f"port-{i + 1}"
        if protocol:
            p["protocol"] = protocol
        if not p.get("protocol"):
            p.pop("protocol", None)
        target: Any = p["port"]
        if target_port:
            target = int(target_port) if target_port.isdigit() else target_port
        p["targetPort"] = target
    spec: Obj = {"ports": ports, "selector": _selector(kind, obj)}
    if service_type:
        spec["type"] = service_type
    body: Obj = {"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": name or meta.get("name")}, "spec": spec}
    if meta.get("labels"):
        body["metadata"]["labels"] = dict(meta["labels"])
    return body


def expose(
    resource: Annotated[list[str], typer.Argument(help="TYPE/NAME or TYPE NAME (deployment, replicaset, pod, "
                                                       "service)")],
    port: Annotated[int | None, typer.Option("--port", help="The port the service serves on.")] = None,
    target_port: Annotated[str | None, typer.Option("--target-port",
                                                    help="Name or number of the port on the pods.")] = None,
    service_type: Annotated[str | None, typer.Option("--type", help="ClusterIP, NodePort, LoadBalancer or "
                                                                    "ExternalName.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The name of the new service.")] = None,
    protocol: Annotated[str | None, typer.Option("--protocol", help="TCP, UDP or SCTP.")] = None,
) -> None:
    """Take a deployment, replica set, pod or service and expose it as a new Kubernetes service."""
    ctx = state.ctx
    kind, obj_name = one_target(resource, verb="expose")

    async def go() -> int:
        async with ctx.client() as client:
            mapper = await ctx.rest_mapper(client)
            info = resolve(mapper, kind)
            if info.kind not in ("Deployment", "ReplicaSet", "Pod", "Service"):
                raise CommandError(f"cannot expose a {info.kind}")
            obj = await client.get_raw(info, obj_name, ctx.namespace)
            body = service_for(info.kind, obj, port=port, target_port=target_port, service_type=service_type,
                               name=name, protocol=protocol)
            created = await client.create_raw(resolve(mapper, "services"), body, ctx.namespace)
        emit(f"service/{created['metadata']['name']} exposed\n")
        return 0
    raise typer.Exit(run(go()))
