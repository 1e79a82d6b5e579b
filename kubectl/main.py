"""`pkctl`: read kubectl's global flags anywhere on the line, run one verb, speak kubectl's errors.

Global flags (`--kubeconfig`, `--context`, `--server`/`-s`, `--token`,
`--certificate-authority`, `--insecure-skip-tls-verify`, `--namespace`/`-n`,
`--all-namespaces`/`-A`) may come before or after the verb, as with kubectl; the verbs live
in `kubectl.app`. The kubeconfig is found as kubectl finds it (`--kubeconfig`, then
`$KUBECONFIG`, then `~/.kube/config`), and `--server` alone (with `--token`) needs none.
Failures print `error: ...` or `Error from server (Reason): ...` on stderr and exit 1; an
unreachable server is named by its address; no traceback reaches the user.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import typer

from kube.client import KubeconfigError, load_kubeconfig
from kube.client.config import ClientConfig
from kube.errors import ApiError
from kube.jsonpath import JSONPathError
from kubectl.app import NEEDS_NO_SERVER, app
from kubectl.context import CommandError, Context, state
from kubectl.manifests import ManifestError

__all__ = ["main", "split_global_flags"]

# typer re-exports BadParameter from whichever click it runs on (recent releases carry their
# own copy), so the exception classes to catch are found through it.
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

_VALUE_FLAGS = {"--kubeconfig": "kubeconfig", "--context": "context", "--server": "server", "-s": "server",
                "--token": "token", "--namespace": "namespace", "-n": "namespace",
                "--certificate-authority": "certificate_authority"}
_BOOL_FLAGS = {"-A": "all_namespaces", "--all-namespaces": "all_namespaces",
               "--insecure-skip-tls-verify": "insecure"}


@dataclass
class GlobalFlags:
    kubeconfig: str | None = None
    context: str | None = None
    server: str | None = None
    token: str | None = None
    namespace: str | None = None
    certificate_authority: str | None = None
    all_namespaces: bool = False
    insecure: bool = False


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
        if name in _VALUE_FLAGS:
            if not eq:
                if i + 1 >= len(argv):
                    raise CommandError(f"flag needs an argument: {name}")
                value = argv[i + 1]
                i += 1
            setattr(flags, _VALUE_FLAGS[name], value)
        elif name in _BOOL_FLAGS:
            setattr(flags, _BOOL_FLAGS[name], value.lower() != "false" if eq else True)
        elif arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"):
            flags.namespace = arg[2:]
        else:
            rest.append(arg)
        i += 1
    return flags, rest


def _client_config(flags: GlobalFlags, *, required: bool) -> ClientConfig | None:
    try:
        config = load_kubeconfig(flags.kubeconfig, context=flags.context)
    except KubeconfigError:
        if flags.server is None:
            if required:
                raise
            return None
        config = ClientConfig(server=flags.server.rstrip("/"), token=flags.token)
    config = config.with_overrides(server=flags.server, token=flags.token)
    if flags.certificate_authority:
        config = replace(config, ca_data=Path(flags.certificate_authority).read_bytes())
    if flags.insecure:
        config = replace(config, insecure_skip_tls_verify=True)
    return config


def _verb(rest: list[str]) -> str | None:
    return next((a for a in rest if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        flags, rest = split_global_flags(argv)
        verb = _verb(rest)
        wants_help = not rest or "-h" in rest or "--help" in rest
        config = None
        if verb not in NEEDS_NO_SERVER and not wants_help:
            config = _client_config(flags, required=True)
        elif verb == "version":
            config = _client_config(flags, required=False)
        namespace = flags.namespace or (config.namespace if config else None) or "default"
        state.ctx = Context(config=config, namespace=namespace, namespace_explicit=flags.namespace is not None,
                            all_namespaces=flags.all_namespaces, kubeconfig=flags.kubeconfig,
                            context_name=flags.context)
        code = typer.main.get_command(app).main(args=rest, prog_name="pkctl", standalone_mode=False)
        return int(code or 0)
    except (CommandError, ManifestError, KubeconfigError, JSONPathError) as e:
        print(f"error: {e}", file=sys.stderr)
    except ApiError as e:
        print(f"Error from server ({e.reason}): {e.message}", file=sys.stderr)
    except _USAGE_ERROR as e:
        ctx = getattr(e, "ctx", None)
        hint = f"\nSee '{ctx.command_path} --help' for usage." if ctx is not None else ""
        print(f"error: {e.format_message()}{hint}", file=sys.stderr)  # type: ignore[attr-defined]
    except _CLICK_EXCEPTION as e:
        print(f"error: {e.format_message()}", file=sys.stderr)  # type: ignore[attr-defined]
    except typer.Abort:
        return 130
    except httpx.ConnectError as e:
        url = getattr(e.request, "url", None)
        where = f"{url.host}:{url.port}" if url is not None else "the server"
        print(f"The connection to the server {where} was refused - did you specify the right host or port?",
              file=sys.stderr)
    except httpx.HTTPError as e:
        print(f"error: {e}", file=sys.stderr)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 1
