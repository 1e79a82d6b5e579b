"""The node's iptables, driven through the iptables-save / iptables-restore / iptables binaries.

Mirrors kube-proxy's util/iptables runner, for what the proxy needs: read which chains a
table has, apply a restore input atomically (`iptables-restore --noflush`, waiting for the
xtables lock like every other writer of the node's tables), ensure the jumps from the
built-in chains, and remove every trace of the proxy (`cleanup`, what `--cleanup` and a
graceful stop run). Failures raise `IptablesError` with the tool's own message; nothing here
retries (the proxier's sync loop does).

Blocking calls: run them in a thread (`asyncio.to_thread`) from async code.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from proxy.iptables.rules import FILTER_CHAINS, JUMPS, NAT_CHAINS, is_service_chain

__all__ = ["IptablesError", "IptablesRunner", "iptables_available"]

logger = logging.getLogger(__name__)

TIMEOUT = 60.0
ROUTE_LOCALNET = Path("/proc/sys/net/ipv4/conf/all/route_localnet")


class IptablesError(Exception):
    """An iptables tool failed; the message carries its stderr."""


def iptables_available() -> str | None:
    """Why this process cannot program iptables, or None when it can."""
    for tool in ("iptables", "iptables-save", "iptables-restore"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install iptables)"
    out = subprocess.run(["iptables", "-w", "-t", "nat", "-S", "POSTROUTING"], capture_output=True, text=True,
                         check=False, timeout=TIMEOUT)
    if out.returncode != 0:
        return f"iptables cannot read the nat table: {out.stderr.strip() or 'permission denied'}"
    return None


class IptablesRunner:
    """One node's (one network namespace's) IPv4 tables."""

    def _run(self, argv: Sequence[str], *, stdin: str | None = None, check: bool = True) -> str:
        try:
            out = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, check=False,
                                 timeout=TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise IptablesError(f"{argv[0]}: {e}") from e
        if check and out.returncode != 0:
            raise IptablesError(f"{' '.join(argv[:4])}: {out.stderr.strip() or f'exit {out.returncode}'}")
        return out.stdout

    def chains(self, table: str) -> set[str]:
        """The names of every chain of `table`, built-in ones included."""
        text = self._run(["iptables-save", "-t", table])
        return {line[1:].split()[0] for line in text.splitlines() if line.startswith(":")}

    def restore(self, text: str) -> None:
        """Apply a restore input in one transaction, leaving chains it does not declare alone."""
        self._run(["iptables-restore", "--noflush", "--wait"], stdin=text)

    def _has(self, table: str, chain: str, rule: Sequence[str]) -> bool:
        out = subprocess.run(["iptables", "-w", "-t", table, "-C", chain, *rule], capture_output=True, check=False,
                             timeout=TIMEOUT)
        return out.returncode == 0

    def ensure_jumps(self) -> None:
        """Put each jump of `JUMPS` at the top of its built-in chain unless it is there already."""
        for table, chain, rule in reversed(JUMPS):  # inserted at 1, so the first listed ends first
            if not self._has(table, chain, rule):
                self._run(["iptables", "-w", "-t", table, "-I", chain, "1", *rule])

    def enable_route_localnet(self) -> None:
        """Let DNAT apply to 127.0.0.0/8 destinations, so `127.0.0.1:<nodePort>` works (upstream's default)."""
        try:
            if ROUTE_LOCALNET.read_text().strip() != "1":
                ROUTE_LOCALNET.write_text("1\n")
        except OSError as e:
            logger.warning("Cannot enable route_localnet; NodePorts on 127.0.0.1 will not answer",
                           extra={"error": str(e)})

    def cleanup(self) -> bool:
        """Remove the jumps and every chain the proxy owns; True if anything was there to remove."""
        found = False
        for table, chain, rule in JUMPS:
            while self._has(table, chain, rule):
                self._run(["iptables", "-w", "-t", table, "-D", chain, *rule])
                found = True
        lines: list[str] = []
        for table, own in (("filter", FILTER_CHAINS), ("nat", NAT_CHAINS)):
            present = self.chains(table)
            gone = [c for c in present if c in own or is_service_chain(c)]
            if gone:
                found = True
                lines += [f"*{table}", *(f":{c} - [0:0]" for c in gone), *(f"-X {c}" for c in gone), "COMMIT"]
        if lines:
            self.restore("\n".join(lines) + "\n")
        return found
