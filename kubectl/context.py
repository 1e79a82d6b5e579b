"""What every pkctl command shares: the resolved connection, the namespace, and kubectl's wording.

`Context` is built once per invocation from the global flags (which may appear anywhere on
the command line, as with kubectl) and handed to the command. Helpers here turn what a user
typed into resources (`po`, `deploy/web`, `pods,deployments`) and raise `CommandError` with
kubectl's messages, which `main` prints as `error: ...` with exit code 1.

Names are resolved as kubectl's RESTMapper resolves them: against the server's discovery,
never a compiled-in table, so resources the server adds while it runs are found. Resolving
is split in two, as in kubectl: `split_targets`/`one_target` check the syntax without the
network (usage errors need no server), and `resolve_targets`/`resolve`/`info_for_manifest`
map the words through the `RESTMapper` a command gets from `Context.rest_mapper` inside its
event loop, through the client it already holds. Discovery is fetched at most once per
invocation; commands that need no server never fetch it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kube.client import RESTClient, RESTMapper, discover
from kube.client.config import ClientConfig
from kube.resources import ResourceInfo
from kubectl.manifests import Manifest

__all__ = ["CommandError", "Context", "Targets", "color", "emit", "info_for_manifest", "namespace_for", "one_target",
           "parse_duration", "resolve", "resolve_targets", "run", "split_targets", "state"]

T = TypeVar("T")

# What the user typed, checked for syntax only: [(resource type word, names)].
Targets = list[tuple[str, list[str]]]


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
    _mapper: RESTMapper | None = field(default=None, init=False, repr=False)

    def client(self, field_manager: str = "kubectl") -> RESTClient:
        if self.config is None:
            raise CommandError("no server configured: pass --server or --kubeconfig")
        return RESTClient(self.config, user_agent="pkctl/picokube", field_manager=field_manager)

    async def rest_mapper(self, client: RESTClient) -> RESTMapper:
        """The server's discovery, fetched through `client` on first use (two GETs), then reused.

        Raises what discovery raises (the connection error when the server is unreachable).
        Call it from one task at a time; concurrent first calls would each fetch.
        """
        if self._mapper is None:
            self._mapper = await discover(client)
        return self._mapper

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


def resolve(mapper: RESTMapper, name: str) -> ResourceInfo:
    """The resource `name` means on this server, or kubectl's error naming the resource part."""
    info = mapper.resource_for(name)
    if info is None:
        raise CommandError(f'the server doesn\'t have a resource type "{name.partition(".")[0]}"')
    return info


def split_targets(words: list[str], *, verb: str = "get") -> Targets:
    """`pods`, `pods a b`, `pods,deploy`, `pod/a deploy/b` -> [(type, names)], as kubectl reads them.

    Checks the syntax only (no server needed); `resolve_targets` maps the types.
    """
    if not words:
        raise CommandError(f"you must specify the type of resource to {verb}")
    if all("/" in w for w in words):
        out: Targets = []
        for w in words:
            kind, _, name = w.partition("/")
            if not name:
                raise CommandError("arguments in resource/name form must have a single resource and name")
            out.append((kind, [name]))
        return out
    if any("/" in w for w in words):
        raise CommandError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form (e.g. 'pkctl get resource/<resource_name>' instead "
                           "of 'pkctl get resource resource/<resource_name>'")
    return [(k, words[1:]) for k in words[0].split(",") if k]


def resolve_targets(mapper: RESTMapper, targets: Targets) -> list[tuple[ResourceInfo, list[str]]]:
    """Each typed resource type resolved; a category (`all`) stands for its members, as in kubectl.

    Raises CommandError (kubectl's wording) for the first type the server does not serve.
    """
    out: list[tuple[ResourceInfo, list[str]]] = []
    for word, names in targets:
        members = mapper.category(word) or [resolve(mapper, word)]
        out.extend((info, names) for info in members)
    return out


def one_target(words: list[str], *, verb: str) -> tuple[str, str]:
    """Exactly one `KIND/NAME` or `KIND NAME`: the type as typed (for `resolve`) and the name."""
    targets = split_targets(words, verb=verb)
    if len(targets) != 1 or len(targets[0][1]) != 1:
        raise CommandError(f"{verb} expects exactly one resource: TYPE/NAME or TYPE NAME")
    return targets[0][0], targets[0][1][0]


def info_for_manifest(mapper: RESTMapper, m: Manifest) -> ResourceInfo:
    """The resource serving the manifest's apiVersion and kind, or kubectl's `no matches for kind` error."""
    info = mapper.kind_for(str(m.body["apiVersion"]), str(m.body["kind"]))
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
