"""The simulated container's shell: what `kubectl exec` runs on a simulated node.

A simulated container has no processes, so exec is answered by this small interpreter,
with real streams and exit codes. The command line is `argv` as the client sent it:

- `sh -c SCRIPT` (also bash, ash, dash; any directory prefix) runs SCRIPT; `sh` with no `-c`
  reads commands from stdin, one per line, printing the prompt `/ # ` when a TTY was asked
  for (an interactive `kubectl exec -it POD -- sh`), until `exit` or EOF;
- any other argv runs that one command.

SCRIPT is statements separated by `;`, `&&`, `||` or newlines (short-circuiting as in sh);
words may be quoted; `$NAME` and `${NAME}` expand from the container's environment; `>&2`
(or `1>&2`) sends a statement's output to stderr. Commands:

| command | does |
|---|---|
| `echo [-n] WORDS` | prints WORDS |
| `cat [FILE...]` | copies stdin to stdout (`-` or no FILE); `/etc/hostname` is the pod's name; mounted files |
| `env`, `printenv [NAME]` | the container's environment (its `env`, `HOSTNAME`, `PATH`, `HOME`) |
| `hostname`, `pwd`, `whoami`, `id`, `uname [-a]`, `ls [DIR]` | fixed, busybox-like answers (`ls` of a mount lists it) |
| `true`, `:`, `false`, `exit [N]`, `sleep SECONDS` | as in sh |

Anything else exits 127 with `sh: NAME: not found` on stderr; run without a shell, an
unknown program cannot be started at all (an exec error, as runc reports it). The exit status
of the script is that of its last statement, or `exit N`.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kubelet.streaming.process_io import ProcessIO
from kubelet.streaming.remotecommand import ExecError

__all__ = ["Shell", "ShellExit", "COMMANDS", "SHELLS"]

SHELLS = frozenset({"sh", "bash", "ash", "dash"})
COMMANDS = frozenset({"echo", "cat", "env", "printenv", "hostname", "pwd", "whoami", "id", "uname", "ls", "true",
                      ":", "false", "exit", "sleep"} | SHELLS)
_PROMPT = "/ # "
_LS = {"/": "bin\ndev\netc\nhome\nproc\nroot\nsys\ntmp\nusr\nvar", "/etc": "hostname\nhosts\npasswd\nresolv.conf"}
_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_MAX_SLEEP = 3600.0


class ShellExit(Exception):
    """`exit N` was run: the script stops with status N."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class Shell:
    """One exec'd process in a simulated container; `run(argv)` returns its exit status."""

    io: ProcessIO
    hostname: str
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    """What `cat` can read besides /etc/hostname: the container's mounted files."""
    list_dir: Callable[[str], list[str] | None] | None = None
    """What `ls` shows of a mounted directory (None: not one)."""

    def __post_init__(self) -> None:
        self.environ = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                        "HOSTNAME": self.hostname, "HOME": "/root", **self.env}
        if self.io.tty:
            self.environ.setdefault("TERM", "xterm")

    async def run(self, argv: Sequence[str]) -> int:
        """Run `argv`; ExecError when its program does not exist (nothing ran)."""
        if not argv:
            raise ExecError("failed to exec in container: no command given")
        prog = os.path.basename(argv[0])
        if prog in SHELLS:
            if len(argv) >= 3 and argv[1] == "-c":
                return await self.run_script(argv[2])
            return await self.interactive()
        if prog not in COMMANDS:
            raise ExecError(f'failed to exec in container: exec: "{argv[0]}": executable file not found in $PATH')
        try:
            return await self.command([prog, *argv[1:]], to_stderr=False)
        except ShellExit as e:
            return e.code

    async def run_script(self, script: str) -> int:
        try:
            return await self._run_line(script, 0)
        except ShellExit as e:
            return e.code

    async def _run_line(self, text: str, status: int) -> int:
        """Run the statements of `text` after a previous `status`; ShellExit propagates."""
        try:
            for sep, words in _statements(text):
                if (sep == "&&" and status != 0) or (sep == "||" and status == 0):
                    continue
                status = await self.statement(words)
        except ValueError as e:
            await self.write_err(f"sh: syntax error: {e}\n")
            return 2
        return status

    async def interactive(self) -> int:
        buf, status = bytearray(), 0
        while True:
            if self.io.tty:
                await self.write_out(_PROMPT)
            line = await self.io.read_line(buf)
            if line is None:
                return status
            text = line.decode(errors="replace").strip()
            if self.io.tty:
                await self.io.stdout(line.replace(b"\r", b"\r\n") if b"\n" not in line else line)
            if not text:
                continue
            try:
                status = await self._run_line(text, status)
            except ShellExit as e:
                return e.code

    async def statement(self, words: list[str]) -> int:
        to_stderr = bool(words) and words[-1] in (">&2", "1>&2")
        words = [_VAR.sub(lambda m: self.environ.get(m.group(1) or m.group(2), ""), w)
                 for w in (words[:-1] if to_stderr else words)]
        if not words:
            return 0
        name = os.path.basename(words[0])
        if name in SHELLS:
            if len(words) >= 3 and words[1] == "-c":
                return await self.run_script(words[2])
            return await self.interactive()
        if name not in COMMANDS:
            await self.write_err(f"sh: {words[0]}: not found\n")
            return 127
        return await self.command([name, *words[1:]], to_stderr=to_stderr)

    async def command(self, argv: list[str], *, to_stderr: bool) -> int:
        name, args = argv[0], argv[1:]
        out = self.write_err if to_stderr else self.write_out
        if name == "echo":
            newline = args[:1] != ["-n"]
            await out(" ".join(args[0 if newline else 1:]) + ("\n" if newline else ""))
            return 0
        if name == "cat":
            return await self.cat(args, to_stderr=to_stderr)
        if name in ("env", "printenv"):
            if args:
                value = self.environ.get(args[0])
                if value is not None:
                    await out(value + "\n")
                return 0 if value is not None else 1
            await out("".join(f"{k}={v}\n" for k, v in self.environ.items()))
            return 0
        if name in ("true", ":"):
            return 0
        if name == "false":
            return 1
        if name == "exit":
            code = int(args[0]) if args and args[0].lstrip("-").isdigit() else 0
            raise ShellExit(code & 0xFF)
        if name == "sleep":
            try:
                seconds = float(args[0].rstrip("s")) if args else -1.0
            except ValueError:
                seconds = -1.0
            if seconds < 0:
                await self.write_err(f"sleep: invalid number '{args[0] if args else ''}'\n")
                return 1
            await asyncio.sleep(min(seconds, _MAX_SLEEP))
            return 0
        return await self.fixed(name, args, out)

    async def fixed(self, name: str, args: list[str], out: Callable[[str], Awaitable[None]]) -> int:
        if name == "ls":
            path = (args[-1] if args and not args[-1].startswith("-") else "/").rstrip("/") or "/"
            listed = self.list_dir(path) if self.list_dir is not None else None
            if listed is not None:
                await out("".join(f"{name}\n" for name in listed))
                return 0
            if path not in _LS:
                await self.write_err(f"ls: {path}: No such file or directory\n")
                return 1
            await out(_LS[path] + "\n")
            return 0
        answers = {"hostname": self.hostname, "pwd": "/", "whoami": "root", "id": "uid=0(root) gid=0(root) "
                   "groups=0(root)", "uname": f"Linux {self.hostname} picokube-simulated" if "-a" in args else "Linux"}
        await out(answers[name] + "\n")
        return 0

    async def cat(self, files: list[str], *, to_stderr: bool) -> int:
        out = self.write_err if to_stderr else self.write_out
        status = 0
        for f in files or ["-"]:
            if f == "-":
                while chunk := await self.io.read_stdin():
                    await (self.io.stderr if to_stderr else self.io.stdout)(chunk)
            elif f == "/etc/hostname":
                await out(self.hostname + "\n")
            elif f in self.files:
                await out(self.files[f])
            else:
                await self.write_err(f"cat: can't open '{f}': No such file or directory\n")
                status = 1
        return status

    async def write_out(self, text: str) -> None:
        await self.io.stdout(self._tty(text))

    async def write_err(self, text: str) -> None:
        # With a TTY there is one output stream: the terminal.
        await (self.io.stdout if self.io.tty else self.io.stderr)(self._tty(text))

    def _tty(self, text: str) -> bytes:
        return (text.replace("\n", "\r\n") if self.io.tty else text).encode()


def _statements(script: str) -> list[tuple[str | None, list[str]]]:
    """Statements with the separator before each; ValueError on what the subset cannot read."""
    script = re.sub(r"(^|\s)1>&2", r"\1>&2", script.replace("\n", ";"))  # `1>&2` is `>&2`; `echo 1 >&2` is not
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|>")
    lexer.whitespace_split = True
    tokens = list(lexer)
    statements: list[tuple[str | None, list[str]]] = []
    sep: str | None = None
    words: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == ">&" and i + 1 < len(tokens) and tokens[i + 1] == "2":
            words.append(">&2")
            i += 2
            continue
        if tok in (";", "&&", "||"):
            if words:
                statements.append((sep, words))
            sep, words = tok, []
        elif set(tok) <= set(";&|>"):
            raise ValueError(f"unexpected {tok!r}")
        else:
            words.append(tok)
        i += 1
    if words:
        statements.append((sep, words))
    return statements
