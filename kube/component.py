"""What every component's `python -m <component>` shares: flags, logging, signals, leader election, exit codes.

Mirrors component-base's `cli.Run` together with the `--leader-elect` wiring that
kube-scheduler and kube-controller-manager share (`leaderelection.RunOrDie`). A component's
`__main__` parses its flags into a frozen config with `parse_flags`, then hands its main
coroutine to `run_component`:

    def main(argv: list[str] | None = None) -> int:
        config = parse_flags(parse_args, argv, prog="scheduler")
        return run_component(lambda: run(config), name="scheduler", log_level=config.log_level)

Guarantees:
- exit codes: 0 when the work returns or a signal stopped it, 1 when it failed, 2 on bad
  flags (argparse's own usage errors, or a `UsageError` raised while building the config);
  failures and bad flags are reported in one line without a traceback, unless the
  failure was unexpected (then the traceback is logged, since it is a bug);
- logging is set up (`kube.log`) before the work starts;
- the first SIGTERM or SIGINT asks the work to stop: by default by cancelling the main task,
  so every TaskGroup below it unwinds and every `finally` runs (a leader releases its
  Lease); a component with its own graceful shutdown (uvicorn) passes `on_stop` instead.
  A second signal cancels the main task whatever `on_stop` is still doing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from kube.client import KubeconfigError, RESTClient
from kube.leaderelection import LeaderElector, LeadershipLost
from kube.log import setup_logging
from kube.tracing import TracingConfig, shutdown_tracing

__all__ = [
    "COMMON_FAILURES",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "LeaderElection",
    "UsageError",
    "add_leader_election_flags",
    "add_tracing_flags",
    "tracing_from_flags",
    "leader_election_from_flags",
    "parse_flags",
    "run_component",
    "run_leader_elected",
]

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

COMMON_FAILURES: Mapping[type[BaseException], str] = {
    KubeconfigError: "Cannot load kubeconfig",
    LeadershipLost: "Leadership lost, exiting",
}
"""Failures any client component may meet; each is logged with its message and exits 1."""

C = TypeVar("C")


class UsageError(Exception):
    """A flag, or a file a flag names, cannot be used; the component exits 2 naming it."""


def parse_flags(parse: Callable[[list[str] | None], C], argv: list[str] | None, *, prog: str) -> C:
    """`parse(argv)`; on UsageError print `prog: error: <message>` and exit 2, as argparse does itself."""
    try:
        return parse(argv)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


def run_component(work: Callable[[], Awaitable[None]], *, name: str, log_level: str,
                  failures: Mapping[type[BaseException], str] | None = None,
                  on_stop: Callable[[], None] | None = None) -> int:
    """Run `work()` on a new event loop until it returns or a signal stops it; return the exit code.

    `failures` maps expected exception types to the message logged when one ends the work
    (in addition to `COMMON_FAILURES`; the first matching entry wins). Call once per
    process, from the main thread.
    """
    setup_logging(log_level, component=name)
    known = {**COMMON_FAILURES, **(failures or {})}
    try:
        asyncio.run(_until_signalled(work, on_stop=on_stop))
    except Exception as e:  # the process boundary: every failure becomes exit 1
        cause = _single(e)
        message = next((msg for kind, msg in known.items() if isinstance(cause, kind)), None)
        if message is None:
            logger.exception("Failed", extra={"component": name})
        else:
            logger.error(message, extra={"component": name, "error": str(cause)})
        return EXIT_FAILURE
    finally:
        shutdown_tracing()  # flush the spans still queued
    return EXIT_OK


async def _until_signalled(work: Callable[[], Awaitable[None]], *, on_stop: Callable[[], None] | None) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    signalled: list[str] = []

    def stop(sig: signal.Signals) -> None:
        logger.info("Stopping", extra={"signal": sig.name})
        if signalled or on_stop is None:
            task.cancel()
        else:
            on_stop()
        signalled.append(sig.name)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop, sig)
    try:
        await work()
    except asyncio.CancelledError:
        if not signalled:
            raise  # not ours to swallow


def _single(error: BaseException) -> BaseException:
    """The one exception inside (nested) single-member exception groups, else `error` itself."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def add_tracing_flags(parser: argparse.ArgumentParser) -> None:
    """Add `--tracing` (on by default) and `--otlp-endpoint` (an external collector besides the API server)."""
    parser.add_argument("--tracing", default="true", choices=["true", "false"],
                        help="export spans to the API server's trace collector (default true)")
    parser.add_argument("--otlp-endpoint", default=None,
                        help="also export spans to this OTLP/HTTP collector (http://host:4318)")


def tracing_from_flags(args: argparse.Namespace) -> TracingConfig:
    return TracingConfig(enabled=args.tracing == "true", otlp_endpoint=args.otlp_endpoint)


@dataclass(frozen=True)
class LeaderElection:
    """Act only while holding the Lease `namespace/name` (the `--leader-elect*` flags)."""

    name: str
    namespace: str = "kube-system"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def _flag_bool(text: str) -> bool:
    """A Go bool flag's value: 1, t, true, 0, f, false in any case (strconv.ParseBool)."""
    lowered = text.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f'invalid boolean value "{text}"')


def add_leader_election_flags(parser: argparse.ArgumentParser, *, lease: str, what: str) -> None:
    """Add `--leader-elect` and its three timings, named and defaulted as upstream's components do."""
    parser.add_argument("--leader-elect", type=_flag_bool, nargs="?", const=True, default=True, metavar="BOOL",
                        help=f"{what} only while holding the kube-system/{lease} Lease (default true; "
                             "--leader-elect=false runs at once, alone)")
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0)
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0)
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0)


def leader_election_from_flags(args: argparse.Namespace, *, lease: str) -> LeaderElection | None:
    """The election `add_leader_election_flags` asked for (the default), or None with `--leader-elect=false`."""
    if not args.leader_elect:
        return None
    return LeaderElection(lease, lease_duration=args.leader_elect_lease_duration,
                          renew_deadline=args.leader_elect_renew_deadline,
                          retry_period=args.leader_elect_retry_period)


async def run_leader_elected(client: RESTClient, election: LeaderElection | None,
                             work: Callable[[], Awaitable[None]]) -> None:
    """Run `work()` now without an election, else only once this process holds the Lease.

    Raises LeadershipLost when the Lease cannot be renewed in time (the process should exit
    so its supervisor restarts it as a candidate); on cancellation the Lease is released.
    """
    if election is None:
        await work()
        return
    elector = LeaderElector(client, namespace=election.namespace, name=election.name,
                            identity=f"{socket.gethostname()}_{uuid.uuid4()}",
                            lease_duration=election.lease_duration, renew_deadline=election.renew_deadline,
                            retry_period=election.retry_period)

    async def lead() -> None:
        await work()

    await elector.run(lead)
