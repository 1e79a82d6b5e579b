"""`pkctl port-forward POD [LOCAL:]REMOTE...`: local ports that reach a pod's ports.

Listens on `--address` (default localhost) for each `LOCAL:REMOTE` pair (`:REMOTE` or a
bare `REMOTE` as kubectl reads them: a random or the same local port), prints kubectl's
`Forwarding from 127.0.0.1:8080 -> 80` lines, and carries each accepted connection over its
own WebSocket to `pods/NAME/portforward?ports=REMOTE` (subprotocol `v4.channel.k8s.io`: data
on channel 0, errors on channel 1, each opened by the port number), printing `Handling
connection for LOCAL`. An error the kubelet reports for a connection is printed and that
connection closed; the others go on. Runs until interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import sys
from typing import Annotated

import typer

from kube.api import Pod
from kube.client.websocket import ChannelWebSocket, connect_websocket
from kubectl.context import CommandError, run, state
from kubectl.pod_target import pod_name

__all__ = ["port_forward", "parse_port_pairs"]

PROTOCOLS = ("v4.channel.k8s.io",)
DATA, ERROR = 0, 1


def parse_port_pairs(specs: list[str]) -> list[tuple[int, int]]:
    """(local, remote) pairs; local 0 means any free port. CommandError on kubectl's bad forms."""
    pairs = []
    for spec in specs:
        local, colon, remote = spec.partition(":")
        if not colon:
            local, remote = spec, spec
        try:
            lport, rport = int(local or 0), int(remote)
        except ValueError:
            raise CommandError(f"Error parsing local port '{local}': invalid syntax") from None
        if not 0 < rport < 65536 or not 0 <= lport < 65536:
            raise CommandError(f"port {spec} is not in 1-65535")
        pairs.append((lport, rport))
    return pairs


async def _pump_to_ws(reader: asyncio.StreamReader, ws: ChannelWebSocket) -> None:
    while data := await reader.read(64 * 1024):
        await ws.send(DATA, data)


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, pod: str, remote: int) -> None:
    ctx = state.ctx
    assert ctx.config is not None
    try:
        ws = await connect_websocket(ctx.config, Pod.info.object_path(pod, ctx.namespace, "portforward"),
                                     [("ports", str(remote))], PROTOCOLS)
    except Exception as e:  # noqa: BLE001 - one connection's failure: report it, keep forwarding
        print(f"error: {getattr(e, 'message', e)}", file=sys.stderr)
        writer.close()
        return
    opened: set[int] = set()
    upstream = asyncio.ensure_future(_pump_to_ws(reader, ws))
    try:
        while (message := await ws.receive()) is not None:
            channel, data = message
            if channel not in opened:  # the first message of each channel is its port number
                opened.add(channel)
                data = data[2:] if len(data) >= 2 and struct.unpack("<H", data[:2])[0] == remote else data
            if channel == DATA and data:
                writer.write(data)
                await writer.drain()
            elif channel == ERROR and data:
                print(f"E {data.decode(errors='replace')}", file=sys.stderr)
                break
    except (ConnectionError, OSError):
        pass
    finally:
        upstream.cancel()
        await ws.close()
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


def port_forward(
    pod: Annotated[str, typer.Argument(help="POD, pod/NAME or a workload such as deploy/NAME")],
    ports: Annotated[list[str], typer.Argument(help="[LOCAL_PORT:]REMOTE_PORT ...")],
    address: Annotated[str, typer.Option("--address", help="Addresses to listen on (comma separated).")]
    = "localhost",
) -> None:
    """Forward one or more local ports to a pod."""
    pairs = parse_port_pairs(ports)
    hosts = ["127.0.0.1", "::1"] if address == "localhost" else [a.strip() for a in address.split(",")]

    async def go() -> int:
        ctx = state.ctx
        async with ctx.client() as client:
            name = await pod_name(client, ctx.namespace, pod, verb="forward ports to")
            obj = await client.get_raw(Pod.info, name, ctx.namespace)
            phase = (obj.get("status") or {}).get("phase")
            if phase != "Running":
                raise CommandError(f"unable to forward port because pod is not running. Current status={phase}")
        servers = []
        for local, remote in pairs:
            for host in hosts:
                def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter,
                            remote: int = remote) -> asyncio.Task[None]:
                    print(f"Handling connection for {w.get_extra_info('sockname')[1]}", flush=True)
                    return asyncio.ensure_future(_handle(r, w, pod=name, remote=remote))
                try:
                    server = await asyncio.start_server(handler, host, local)
                except OSError as e:
                    if host == "::1" and address == "localhost":
                        continue  # no IPv6 loopback here: kubectl carries on with IPv4
                    raise CommandError(f"unable to listen on port {local}: {e}") from None
                bound = server.sockets[0].getsockname()[1]
                if local == 0:
                    local = bound
                shown = f"[{host}]" if ":" in host else host
                print(f"Forwarding from {shown}:{bound} -> {remote}", flush=True)
                servers.append(server)
        if not servers:
            raise CommandError("unable to listen on any of the requested ports")
        try:
            await asyncio.gather(*(s.serve_forever() for s in servers))
        finally:
            for s in servers:
                s.close()
        return 0

    with contextlib.suppress(KeyboardInterrupt):
        raise typer.Exit(run(go()))

