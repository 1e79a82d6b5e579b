"""The simulated container's shell: what each documented command prints and how it exits."""

from __future__ import annotations

import asyncio

import pytest

from kubelet.streaming.process_io import ProcessIO
from kubelet.streaming.remotecommand import ExecError
from kubelet.streaming.shell import Shell


async def run(argv: list[str], stdin: bytes | None = None, *, tty: bool = False) -> tuple[int, bytes, bytes]:
    out, err = bytearray(), bytearray()

    async def write_out(data: bytes) -> None:
        out.extend(data)

    async def write_err(data: bytes) -> None:
        err.extend(data)

    queue: asyncio.Queue[bytes] | None = None
    if stdin is not None:
        queue = asyncio.Queue()
        for chunk in (stdin, b""):
            queue.put_nowait(chunk)
    io = ProcessIO(stdin=queue, stdout=write_out, stderr=write_err, tty=tty)
    code = await Shell(io, hostname="web-1", env={"GREETING": "hello"}).run(argv)
    return code, bytes(out), bytes(err)


@pytest.mark.parametrize(("argv", "code", "out", "err"), [
    (["sh", "-c", "echo hi; exit 3"], 3, b"hi\n", b""),
    (["/bin/sh", "-c", "echo a && false || echo b"], 0, b"a\nb\n", b""),
    (["sh", "-c", "false && echo never"], 1, b"", b""),
    (["sh", "-c", "echo to-err >&2; echo to-out 1>&2; echo 1 >&2"], 0, b"", b"to-err\nto-out\n1\n"),
    (["sh", "-c", "echo $GREETING ${HOSTNAME}"], 0, b"hello web-1\n", b""),
    (["sh", "-c", "nginx -g daemon"], 127, b"", b"sh: nginx: not found\n"),
    (["echo", "-n", "x"], 0, b"x", b""),
    (["hostname"], 0, b"web-1\n", b""),
    (["cat", "/etc/hostname"], 0, b"web-1\n", b""),
    (["cat", "/nope"], 1, b"", b"cat: can't open '/nope': No such file or directory\n"),
    (["printenv", "GREETING"], 0, b"hello\n", b""),
    (["ls", "/etc"], 0, b"hostname\nhosts\npasswd\nresolv.conf\n", b""),
    (["true"], 0, b"", b""),
    (["false"], 1, b"", b""),
    (["sleep", "0"], 0, b"", b""),
])
async def test_commands(argv: list[str], code: int, out: bytes, err: bytes) -> None:
    assert await run(argv) == (code, out, err)


async def test_cat_copies_stdin() -> None:
    assert await run(["cat"], b"some\nbytes") == (0, b"some\nbytes", b"")


async def test_sh_reads_commands_from_stdin() -> None:
    assert await run(["sh"], b"echo one\necho two\nexit 5\necho never\n") == (5, b"one\ntwo\n", b"")


async def test_interactive_shell_on_a_tty_prompts_and_uses_crlf() -> None:
    code, out, _ = await run(["sh"], b"echo hi\r", tty=True)
    assert code == 0 and out == b"/ # echo hi\r\nhi\r\n/ # "


async def test_env_lists_the_containers_environment() -> None:
    _, out, _ = await run(["env"])
    assert b"GREETING=hello\n" in out and b"HOSTNAME=web-1\n" in out and b"PATH=" in out


async def test_an_unknown_program_cannot_be_started() -> None:
    with pytest.raises(ExecError, match='exec: "nginx": executable file not found in \\$PATH'):
        await run(["nginx"])
