"""Where a `ProxyModel` goes: the node's iptables, or (simulated) nowhere but the report.

Both backends render the same rules from the same model (`proxy.iptables.rules`), so the
simulated mode exercises everything but the kernel: scale runs and tests without root see
exactly what a real node would program. A backend's `sync` is called by one sync loop at a
time (never concurrently) and raises on failure, which the loop retries; `programmed`
describes the last successful sync.

- `IptablesBackend` programs only while it holds this network namespace's lock
  (`proxy.ownership`); otherwise it stands by and reports `programming: false`. A full
  sync re-reads the tables, rewrites every chain, deletes stale ones and re-ensures the
  jumps; between full syncs an unchanged rule set is not applied again.
- `SimulatedBackend` keeps the rendered rules and logs what it would program.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Protocol

from proxy.conntrack import clear_flows, stale_udp_flows
from proxy.iptables.rules import RuleSet, render_rules
from proxy.iptables.runner import IptablesRunner
from proxy.model import ProxyModel
from proxy.ownership import NamespaceLock

__all__ = ["Backend", "IptablesBackend", "Programmed", "SimulatedBackend"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Programmed:
    """What the last successful sync left on the node (or would have, simulated)."""

    model: ProxyModel = field(default_factory=ProxyModel)
    rules: RuleSet | None = None
    programming: bool = False
    """False while another proxy of the same network namespace programs it (standby)."""


class Backend(Protocol):
    mode: str

    @property
    def programmed(self) -> Programmed: ...

    async def sync(self, model: ProxyModel, *, full: bool) -> None:
        """Make the node match `model`; `full` also repairs what others changed. Raises on failure."""
        ...

    async def cleanup(self) -> None:
        """Remove everything this backend programmed (best effort, logged)."""
        ...


def _summary(model: ProxyModel, rules: RuleSet) -> dict[str, int]:
    return {"servicePorts": len(model.service_ports),
            "endpoints": sum(len(sp.endpoints) for sp in model.service_ports),
            "natRules": rules.nat_rules, "filterRules": rules.filter_rules}


class SimulatedBackend:
    """Programs nothing; remembers and logs the rules a real node would get."""

    mode = "simulated"

    def __init__(self, *, cluster_cidr: str | None, masquerade_bit: int) -> None:
        self.cluster_cidr, self.masquerade_bit = cluster_cidr, masquerade_bit
        self._programmed = Programmed()

    @property
    def programmed(self) -> Programmed:
        return self._programmed

    async def sync(self, model: ProxyModel, *, full: bool) -> None:
        rules = render_rules(model, cluster_cidr=self.cluster_cidr, masquerade_bit=self.masquerade_bit)
        if model != self._programmed.model or self._programmed.rules is None:
            logger.info("Would program", extra=_summary(model, rules))
            for sp in model.service_ports:
                logger.debug("Would program service port", extra={"servicePort": str(sp.name),
                                                                  "protocol": sp.protocol,
                                                                  "endpoints": [str(e) for e in sp.endpoints]})
        self._programmed = Programmed(model, rules, programming=True)

    async def cleanup(self) -> None:
        self._programmed = Programmed()


class IptablesBackend:
    """Programs this network namespace's iptables while holding its lock."""

    mode = "iptables"

    def __init__(self, *, cluster_cidr: str | None, masquerade_bit: int, runner: IptablesRunner | None = None,
                 lock: NamespaceLock | None = None) -> None:
        self.cluster_cidr, self.masquerade_bit = cluster_cidr, masquerade_bit
        self.runner = runner or IptablesRunner()
        self.lock = lock or NamespaceLock()
        self._programmed = Programmed()

    @property
    def programmed(self) -> Programmed:
        return self._programmed

    async def sync(self, model: ProxyModel, *, full: bool) -> None:
        await asyncio.to_thread(self._sync, model, full)

    def _sync(self, model: ProxyModel, full: bool) -> None:
        was_holder = self.lock.held
        if not self.lock.try_acquire():
            if self._programmed.programming or self._programmed.rules is None:
                logger.info("Another proxy programs this network namespace; standing by",
                            extra={"lock": str(self.lock.path)})
            self._programmed = Programmed(model, render_rules(model, cluster_cidr=self.cluster_cidr,
                                                              masquerade_bit=self.masquerade_bit))
            return
        if not was_holder:
            logger.info("Programming this network namespace's iptables", extra={"lock": str(self.lock.path)})
            self.runner.enable_route_localnet()
            full = True
        previous = self._programmed if self._programmed.programming else Programmed()
        existing = self.runner.chains("nat") if full or previous.rules is None else previous.rules.chains
        rules = render_rules(model, cluster_cidr=self.cluster_cidr, masquerade_bit=self.masquerade_bit,
                             existing_chains=existing)
        if full or previous.rules is None or rules.text != previous.rules.text:
            self.runner.restore(rules.text)
            logger.debug("Restored iptables rules", extra=_summary(model, rules))
        if full:
            self.runner.ensure_jumps()
        if model != previous.model:
            logger.info("Programmed", extra=_summary(model, rules))
        self._programmed = Programmed(model, rules, programming=True)
        clear_flows(stale_udp_flows(previous.model, model))

    async def cleanup(self) -> None:
        await asyncio.to_thread(self._cleanup)

    def _cleanup(self) -> None:
        if not self.lock.try_acquire():
            return  # another proxy of this namespace programs it: its rules stay
        try:
            if self.runner.cleanup():
                logger.info("Removed the proxy's iptables rules")
        finally:
            self.lock.release()
            self._programmed = Programmed()
