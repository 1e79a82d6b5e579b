"""What a simulated container "runs": a tiny, documented subset of `sh`.

The simulated runtime starts no processes. To let pods exercise exits, restarts and output,
it reads the container's `command` + `args` as a program:

- `["sh", "-c", SCRIPT]` (also `bash`, `ash`, `dash`, with any directory prefix) runs SCRIPT;
- a bare `["sleep", "5"]`, `["echo", "hi"]`, `["true"]` or `["false"]` runs that one statement;
- anything else (no command: the image's entrypoint; `nginx`; ...) is a server that runs until
  it is stopped.

A SCRIPT is statements separated by `;`, `&&`, `||` or newlines. Known statements:
`sleep SECONDS` (or `sleep infinity`), `echo TEXT` (a log line), `cat FILE...` (one log
line per line of each file the runtime gives the container, such as the /etc/resolv.conf
built from the sandbox's DNS config; a missing file is busybox's error and status 1),
`true`/`:`, `false`, `exit [CODE]`. `&&` and `||` short-circuit as in sh. When the script ends the container exits
with the status of the last statement. A statement it does not know (`while`, `nginx`, ...)
means "keeps running from here on", so real-looking long-running scripts stay up.

Examples: `sh -c "exit 0"` exits 0 at once; `sh -c "echo hi; sleep 2; exit 3"` logs `hi` and
exits 3 after two seconds; `sh -c "sleep 1 && false"` exits 1 after one second.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Program", "interpret"]

_SHELLS = {"sh", "bash", "ash", "dash"}
_SINGLE = {"sleep", "echo", "cat", "true", "false", ":", "exit"}
_SEPARATORS = {";", "&&", "||"}


@dataclass(frozen=True)
class Program:
    """The behaviour of a started container, relative to its start time.

    `runs_for` is None for a container that runs until stopped; otherwise it exits
    `runs_for` seconds after starting with `exit_code`. `output` holds (offset, line).
    """

    output: tuple[tuple[float, str], ...] = ()
    runs_for: float | None = None
    exit_code: int = 0


FOREVER = Program()


def interpret(command: tuple[str, ...] | list[str], args: tuple[str, ...] | list[str] = (), *,
              files: Mapping[str, str] | None = None) -> Program:
    """Decide what a container with this command line does; never raises. `files` is what `cat` reads."""
    argv = [*command, *args]
    if not argv:
        return FOREVER
    prog = os.path.basename(argv[0])
    if prog in _SHELLS:
        if len(argv) >= 3 and argv[1] == "-c":
            return _run_script(argv[2], files or {})
        return FOREVER
    if prog in _SINGLE:
        return _run([(None, [prog, *argv[1:]])], files or {})
    return FOREVER


def _split(script: str) -> list[tuple[str | None, list[str]]] | None:
    """Statements with the separator before each; None when the script does not parse."""
    lexer = shlex.shlex(script.replace("\n", ";"), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    statements: list[tuple[str | None, list[str]]] = []
    sep: str | None = None
    words: list[str] = []
    for tok in tokens:
        if tok in _SEPARATORS:
            if words:
                statements.append((sep, words))
            sep, words = tok, []
        elif set(tok) <= set(";&|"):
            return None  # `&`, `|`, `;;`: not in the subset
        else:
            words.append(tok)
    if words:
        statements.append((sep, words))
    return statements


def _run_script(script: str, files: Mapping[str, str]) -> Program:
    statements = _split(script)
    return FOREVER if statements is None else _run(statements, files)


def _cat(paths: list[str], files: Mapping[str, str], t: float, output: list[tuple[float, str]]) -> int:
    status = 0
    for path in paths:
        if path not in files:
            output.append((t, f"cat: can't open '{path}': No such file or directory"))
            status = 1
            continue
        output.extend((t, line) for line in files[path].splitlines())
    return status


def _run(statements: list[tuple[str | None, list[str]]], files: Mapping[str, str]) -> Program:
    t, status = 0.0, 0
    output: list[tuple[float, str]] = []
    for sep, words in statements:
        if (sep == "&&" and status != 0) or (sep == "||" and status == 0):
            continue
        cmd, rest = words[0], words[1:]
        if cmd == "echo":
            output.append((t, " ".join(rest)))
            status = 0
        elif cmd == "cat":
            status = _cat(rest, files, t, output)
        elif cmd in ("true", ":"):
            status = 0
        elif cmd == "false":
            status = 1
        elif cmd == "exit":
            code = _int(rest[0]) if rest else status
            if code is None:
                return Program(tuple(output), t, 2)
            return Program(tuple(output), t, code & 0xFF)
        elif cmd == "sleep":
            seconds = _seconds(rest[0]) if rest else None
            if seconds is None:
                return Program(tuple(output), t, 1)
            if math.isinf(seconds):
                return Program(tuple(output), None)
            t += seconds
            status = 0
        else:
            return Program(tuple(output), None)
    return Program(tuple(output), t, status)


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _seconds(text: str) -> float | None:
    if text in ("inf", "infinity"):
        return math.inf
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        return None
    return value if value >= 0 else None
