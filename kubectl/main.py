"""`pkctl`: parse kubectl's global flags anywhere on the line, run one verb, speak kubectl's errors.

Verbs: apply, create, get, delete, logs, version. Global flags (`--kubeconfig`, `--context`,
`--server`/`-s`, `--token`, `--namespace`/`-n`) may come before or after the verb, as with
kubectl. Failures print `error: ...` or `Error from server (Reason): ...` on stderr and exit
1; no traceback reaches the user.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

import httpx

from kube.client import KubeconfigError, load_kubeconfig
from kube.client.config import ClientConfig
from kube.errors import ApiError
from kubectl.commands import COMMANDS, CommandError, Context
from kubectl.manifests import ManifestError

__all__ = ["main"]

_GLOBAL_VALUE_FLAGS = {"--kubeconfig": "kubeconfig", "--context": "context", "--server": "server", "-s": "server",
                       "--token": "token", "--namespace": "namespace", "-n": "namespace"}


@dataclass
class GlobalFlags:
    kubeconfig: str | None = None
    context: str | None = None
    server: str | None = None
    token: str | None = None
    namespace: str | None = None


def split_global_flags(argv: list[str]) -> tuple[GlobalFlags, list[str]]:
    """Take the global flags out of `argv` wherever they are; return them and the rest."""
    flags, rest = GlobalFlags(), []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            rest.extend(argv[i:])
            break
        if name in _GLOBAL_VALUE_FLAGS:
            if not eq:
                if i + 1 >= len(argv):
                    raise CommandError(f"flag needs an argument: {name}")
                value = argv[i + 1]
                i += 1
            setattr(flags, _GLOBAL_VALUE_FLAGS[name], value)
        elif arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"):
            flags.namespace = arg[2:]
        else:
            rest.append(arg)
        i += 1
    return flags, rest


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pkctl", description="pkctl controls a picokube cluster, like kubectl.")
    sub = p.add_subparsers(dest="verb", metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        cmd.add_arguments(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return p


def _client_config(flags: GlobalFlags) -> ClientConfig:
    config = load_kubeconfig(flags.kubeconfig, context=flags.context)
    return config.with_overrides(server=flags.server, token=flags.token)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        flags, rest = split_global_flags(argv)
        parser = build_parser()
        args = parser.parse_args(rest)
        if not args.verb:
            parser.print_help()
            return 0
        cmd = COMMANDS[args.verb]
        if not cmd.needs_server:
            return asyncio.run(cmd.run(Context(None, flags.namespace, False), args))
        config = _client_config(flags)
        ctx = Context(config, flags.namespace or config.namespace or "default", flags.namespace is not None)
        return asyncio.run(cmd.run(ctx, args))
    except (CommandError, ManifestError, KubeconfigError) as e:
        print(f"error: {e}", file=sys.stderr)
    except ApiError as e:
        print(f"Error from server ({e.reason}): {e.message}", file=sys.stderr)
    except httpx.ConnectError as e:
        host = getattr(e.request, "url", None)
        where = f"{host.host}:{host.port}" if host is not None else "the server"
        print(f"The connection to the server {where} was refused - did you specify the right host or port?",
              file=sys.stderr)
    except httpx.HTTPError as e:
        print(f"error: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 1
