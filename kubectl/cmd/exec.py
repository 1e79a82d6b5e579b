"""`pkctl exec POD [-c C] [-i] [-t] -- COMMAND [ARG...]`: run a command in a container.

As kubectl 1.30+ does: one WebSocket to `pods/NAME/exec` asking for `v5.channel.k8s.io`
(then `v4.channel.k8s.io`), stdout and stderr written as they arrive, stdin (with `-i`) sent
and closed with v5's close signal at EOF, and the exit code taken from the Status on the
error channel: `command terminated with exit code N` on stderr and exit status N, as kubectl.
With `-t` (and a terminal on stdin) the local terminal is put in raw mode for the session and
its size is sent on the resize channel (again on SIGWINCH). The container defaults to the
`kubectl.kubernetes.io/default-container` annotation, else the first one, saying so on
stderr when the pod has several; a completed pod is refused with kubectl's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from kube.api import Pod
from kube.client import RESTClient
from kube.client.websocket import ChannelWebSocket, connect_websocket
from kubectl.context import CommandError, run, state
from kubectl.pod_target import pod_name

__all__ = ["exec_", "default_container"]

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
_DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"


def default_container(pod: dict[str, Any], wanted: str | None) -> str:
    """The container to use (kubectl's rules); CommandError for an unknown name."""
    containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
    name = pod["metadata"]["name"]
    if wanted:
        if wanted not in containers:
            raise CommandError(f"container {wanted} is not valid for pod {name}")
        return wanted
    annotated = ((pod["metadata"].get("annotations") or {}).get(_DEFAULT_CONTAINER))
    if annotated in containers:
        return str(annotated)
    if not containers:
        raise CommandError(f"pod {name} has no containers")
    if len(containers) > 1:
        print(f'Defaulted container "{containers[0]}" out of: {", ".join(containers)}', file=sys.stderr)
    return str(containers[0])


@contextlib.contextmanager
def _raw_terminal(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    import termios
    import tty
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def _send_stdin(ws: ChannelWebSocket) -> None:
    fd = sys.stdin.fileno()
    while True:
        chunk = await asyncio.to_thread(os.read, fd, 32 * 1024)
        if not chunk:
            break
        await ws.send(STDIN, chunk)
    if ws.subprotocol == PROTOCOLS[0]:
        await ws.close_channel(STDIN)


async def _send_size(ws: ChannelWebSocket) -> None:
    with contextlib.suppress(OSError):
        size = os.get_terminal_size(sys.stdout.fileno())
        await ws.send(RESIZE, json.dumps({"Width": size.columns, "Height": size.lines}).encode())


async def stream_exec(ws: ChannelWebSocket, *, stdin: bool, tty: bool) -> int:
    """Pump the session to its end; the command's exit code (1 with the message for other failures)."""
    tasks = [asyncio.ensure_future(_send_stdin(ws))] if stdin else []
    if tty:
        await _send_size(ws)
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGWINCH, lambda: tasks.append(asyncio.ensure_future(_send_size(ws))))
    status: dict[str, Any] | None = None
    error_text = b""
    try:
        while (message := await ws.receive()) is not None:
            channel, data = message
            if channel in (STDOUT, STDERR) and data:
                out = sys.stdout.buffer if channel == STDOUT else sys.stderr.buffer
                out.write(data)
                out.flush()
            elif channel == ERROR:
                error_text += data
    finally:
        for t in tasks:
            t.cancel()
        await ws.close()
    if error_text:
        try:
            status = json.loads(error_text)
        except ValueError:
            status = {"status": "Failure", "message": error_text.decode(errors="replace")}
    if status is None or status.get("status") == "Success":
        return 0
    if status.get("reason") == "NonZeroExitCode":
        causes = (status.get("details") or {}).get("causes") or []
        code = next((int(c["message"]) for c in causes if c.get("reason") == "ExitCode"), 1)
        print(f"command terminated with exit code {code}", file=sys.stderr)
        return code
    print(f"error: {status.get('message', 'the command failed')}", file=sys.stderr)
    return 1


def exec_(
    pod: Annotated[str, typer.Argument(help="POD, pod/NAME or a workload such as deploy/NAME")],
    command: Annotated[list[str] | None, typer.Argument(help="the command and its arguments, after --")] = None,
    container: Annotated[str | None, typer.Option("-c", "--container", help="The container.")] = None,
    stdin: Annotated[bool, typer.Option("-i", "--stdin", help="Pass stdin to the container.")] = False,
    tty: Annotated[bool, typer.Option("-t", "--tty", help="Stdin is a TTY.")] = False,
) -> None:
    """Execute a command in a container."""
    if not command:
        raise CommandError("you must specify at least one command for the container")
    ctx = state.ctx
    raw = tty and stdin and sys.stdin.isatty()
    if tty and not stdin:
        print("Unable to use a TTY - input is not a terminal or the right kind of file", file=sys.stderr)
        tty = False

    async def go() -> int:
        async with ctx.client() as client:
            name = await pod_name(client, ctx.namespace, pod, verb="exec into")
            obj = await client.get_raw(Pod.info, name, ctx.namespace)
            phase = (obj.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed"):
                raise CommandError(f"cannot exec into a container in a completed pod; current phase is {phase}")
            chosen = default_container(obj, container)
            return await _open_and_stream(client, name, chosen, list(command), stdin=stdin, tty=tty, raw=raw)

    raise typer.Exit(run(go()))


async def _open_and_stream(client: RESTClient, name: str, container: str, command: list[str], *, stdin: bool,
                           tty: bool, raw: bool) -> int:
    ctx = state.ctx
    assert ctx.config is not None
    params = [("command", c) for c in command] + [("container", container), ("stdout", "true")]
    params += [("stdin", "true")] if stdin else []
    params += [("tty", "true")] if tty else [("stderr", "true")]
    ws = await connect_websocket(ctx.config, Pod.info.object_path(name, ctx.namespace, "exec"), params, PROTOCOLS)
    with _raw_terminal(raw):
        return await stream_exec(ws, stdin=stdin, tty=tty)
