"""What an exec'd or attached process sees, whatever protocol carries it.

`ProcessIO` is the seam between the protocol layer (WebSocket channels or SPDY streams, in
`remotecommand`) and whatever answers the command (the simulated runtime's interpreter): the
process reads stdin until b"" (EOF), writes stdout and stderr, and may watch terminal
resizes. A stream the client did not ask for reads EOF at once / discards what is written,
as upstream's IgnoreChannel does. With a TTY, stderr is merged into stdout (upstream drops
the stderr stream when `tty=1`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["ProcessIO", "TerminalSize", "Writer"]

Writer = Callable[[bytes], Awaitable[None]]


@dataclass(frozen=True)
class TerminalSize:
    width: int
    height: int


async def _discard(data: bytes) -> None:
    return None


@dataclass
class ProcessIO:
    """The process's standard streams; filled by the protocol layer, used by the runtime."""

    stdin: asyncio.Queue[bytes] | None = None
    """Chunks the client sent, b"" at EOF; None when stdin was not requested."""
    stdout: Writer = _discard
    stderr: Writer = _discard
    tty: bool = False
    resizes: asyncio.Queue[TerminalSize] = field(default_factory=asyncio.Queue)
    _eof: bool = False

    @property
    def has_stdin(self) -> bool:
        return self.stdin is not None

    async def read_stdin(self) -> bytes:
        """The next stdin chunk; b"" at EOF (and forever after, also when stdin was not requested)."""
        if self.stdin is None or self._eof:
            return b""
        chunk = await self.stdin.get()
        if not chunk:
            self._eof = True
        return chunk

    async def read_line(self, buffer: bytearray) -> bytes | None:
        """One line from stdin (with its newline) using `buffer` for the rest; None at EOF."""
        while b"\n" not in buffer and b"\r" not in buffer:
            chunk = await self.read_stdin()
            if not chunk:
                if buffer:
                    line = bytes(buffer)
                    buffer.clear()
                    return line
                return None
            buffer += chunk
        cut = min(i for i in (buffer.find(b"\n"), buffer.find(b"\r")) if i >= 0) + 1
        line = bytes(buffer[:cut])
        del buffer[:cut]
        return line
