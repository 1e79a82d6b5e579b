"""What every pkctl command shares: the resolved connection, the namespace, and kubectl's wording.

`Context` is built once per invocation from the global flags (which may appear anywhere on
the command line, as with kubectl) and handed to the command. Helpers here turn what a user
typed into resources (`po`, `deploy/web`, `pods,deployments`) and raise `CommandError` with
kubectl's messages, which `main` prints as `error: ...` with exit code 1.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from kube.client import RESTClient
from kube.client.config import ClientConfig
from kube.resources import ResourceInfo, resolve_resource, resource_for_kind
from kubectl.manifests import Manifest

__all__ = ["CommandError", "Context", "emit", "info_for_manifest", "namespace_for", "parse_duration",
           "one_target", "resolve", "run", "split_targets", "state", "color"]

T = TypeVar("T")


class CommandError(Exception):
    """A usage or client-side error; printed as `error: <message>`."""


@dataclass
class Context:
    """The connection and namespace of this invocation (`config` is None until a command needs it)."""

    config: ClientConfig | None = None
    namespace: str = "default"
    namespace_explicit: bool = False
    all_namespaces: bool = False
    kubeconfig: str | None = None
    context_name: str | None = None

    def client(self, field_manager: str = "kubectl") -> RESTClient:
        if self.config is None:
            raise CommandError("no server configured: pass --server or --kubeconfig")
        return RESTClient(self.config, user_agent="pkctl/picokube", field_manager=field_manager)

    def ns_for(self, info: ResourceInfo) -> str | None:
        """The namespace to address `info` in: None for cluster-scoped resources and with -A."""
        if not info.namespaced or self.all_namespaces:
            return None
        return self.namespace


class _State:
    """The one Context of this process, set by `main` before the command runs."""

    ctx: Context = Context()


state = _State()


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def emit(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def color(text: str, code: str, *, stream: Any = None) -> str:
    """`text` in ANSI colour `code` ('32' green, '31' red, '33' yellow) only on a terminal."""
    stream = stream or sys.stdout
    return f"\033[{code}m{text}\033[0m" if getattr(stream, "isatty", lambda: False)() else text


def resolve(name: str) -> ResourceInfo:
    info = resolve_resource(name)
    if info is None:
        raise CommandError(f'the server doesn\'t have a resource type "{name}"')
    return info


def split_targets(words: list[str], *, verb: str = "get") -> list[tuple[ResourceInfo, list[str]]]:
    """`pods`, `pods a b`, `pods,deploy`, `pod/a deploy/b` -> [(info, names)], as kubectl reads them."""
    if not words:
        raise CommandError(f"you must specify the type of resource to {verb}")
    if all("/" in w for w in words):
        out: list[tuple[ResourceInfo, list[str]]] = []
        for w in words:
            kind, _, name = w.partition("/")
            if not name:
                raise CommandError("arguments in resource/name form must have a single resource and name")
            out.append((resolve(kind), [name]))
        return out
    if any("/" in w for w in words):
        raise CommandError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form (e.g. 'pkctl get resource/<resource_name>' instead "
                           "of 'pkctl get resource resource/<resource_name>'")
    return [(resolve(k), words[1:]) for k in words[0].split(",") if k]


def one_target(words: list[str], *, verb: str) -> tuple[ResourceInfo, str]:
    """Exactly one `KIND/NAME` or `KIND NAME`."""
    targets = split_targets(words, verb=verb)
    if len(targets) != 1 or len(targets[0][1]) != 1:
        raise CommandError(f"{verb} expects exactly one resource: TYPE/NAME or TYPE NAME")
    return targets[0][0], targets[0][1][0]


def info_for_manifest(m: Manifest) -> ResourceInfo:
    info = resource_for_kind(str(m.body["apiVersion"]), str(m.body["kind"]))
    if info is None:
        name = (m.body.get("metadata") or {}).get("name", "")
        ns = (m.body.get("metadata") or {}).get("namespace", "")
        raise CommandError(f'resource mapping not found for name: "{name}" namespace: "{ns}" from "{m.source}": '
                           f'no matches for kind "{m.body["kind"]}" in version "{m.body["apiVersion"]}"\n'
                           "ensure CRDs are installed first")
    return info


def namespace_for(ctx: Context, info: ResourceInfo, body: dict[str, Any]) -> str | None:
    """The manifest's namespace (filled in from -n/the context), or kubectl's mismatch error."""
    if not info.namespaced:
        return None
    meta = body.setdefault("metadata", {})
    given = meta.get("namespace")
    if given and ctx.namespace_explicit and given != ctx.namespace:
        raise CommandError(f"the namespace from the provided object \"{given}\" does not match the namespace "
                           f"\"{ctx.namespace}\". You must pass '--namespace={given}' to perform this operation.")
    meta["namespace"] = given or ctx.namespace
    return str(meta["namespace"])


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, flag: str) -> float:
    """Go duration syntax as kubectl takes it (`30s`, `5m`, `1h30m`, `500ms`); a bare number is seconds."""
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        pass
    total, num, i = 0.0, "", 0
    while i < len(s):
        ch = s[i]
        if ch.isdigit() or ch == ".":
            num += ch
            i += 1
            continue
        unit = "ms" if s.startswith("ms", i) else ch
        if unit not in _UNITS or not num:
            raise CommandError(f'invalid argument "{text}" for "{flag}" flag: time: invalid duration "{text}"')
        total += float(num) * _UNITS[unit]
        num, i = "", i + len(unit)
    if num:
        raise CommandError(f'invalid argument "{text}" for "{flag}" flag: time: missing unit in duration "{text}"')
    return total
