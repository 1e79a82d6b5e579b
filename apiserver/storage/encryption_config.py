"""The `--encryption-provider-config` file: which resources are encrypted at rest, and how.

Mirrors k8s.io/apiserver pkg/server/options/encryptionconfig. The file is an
apiserver.config.k8s.io/v1 EncryptionConfiguration:

    apiVersion: apiserver.config.k8s.io/v1
    kind: EncryptionConfiguration
    resources:
      - resources: [secrets]
        providers:
          - aesgcm:
              keys:
                - {name: key2, secret: <base64 of 16, 24 or 32 bytes>}
                - {name: key1, secret: ...}
          - identity: {}

Per entry the first provider (and within it the first key) encrypts new writes; every
provider and key can decrypt, so a key is rotated by adding the new one first, rewriting the
resources, then dropping the old one. Providers: aesgcm, secretbox (when PyNaCl is installed)
and identity; anything else (aescbc, kms) is refused when the file loads rather than ignored.
Resource names are `secrets` (core), `deployments.apps`, `foos.example.com` (a custom
resource), `*.` (every core resource), `*.apps` (every built-in resource of a group) and
`*.*` (every built-in resource). A resource named by several entries uses the first.

Invariant: `load_encryption_config` either returns a complete configuration or raises
`ValueError` naming every problem with its field path; it never logs a key.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from apiserver.storage.transformer import (
    AESGCMTransformer,
    IdentityTransformer,
    PrefixTransformer,
    SecretboxTransformer,
    Transformer,
)
from kube.resources import ResourceInfo

__all__ = ["EncryptionConfig", "load_encryption_config", "parse_encryption_config"]

logger = logging.getLogger(__name__)

_API_VERSION = "apiserver.config.k8s.io/v1"
_KIND = "EncryptionConfiguration"
_CIPHERS: dict[str, Callable[[bytes], Transformer]] = {"aesgcm": AESGCMTransformer,
                                                      "secretbox": SecretboxTransformer}


@dataclass(frozen=True)
class EncryptionConfig:
    """The parsed file: (resource names, transformer) per entry, in file order."""

    entries: tuple[tuple[tuple[str, ...], PrefixTransformer], ...]

    def transformer_for(self, plural: str, group: str) -> PrefixTransformer | None:
        """The transformer of the first entry naming this built-in resource, or None."""
        names = {f"{plural}.{group}" if group else plural, f"*.{group}", "*.*"}
        return next((t for resources, t in self.entries if names.intersection(resources)), None)

    def key_prefixes(self, root: str, builtin: Iterable[ResourceInfo]) -> list[tuple[str, PrefixTransformer]]:
        """(etcd key prefix, transformer) for every resource the file covers, under `root`.

        Built-in resources live at `<root>/<plural>/`, custom resources at `<root>/<group>/<plural>/`.
        """
        base = root.rstrip("/")
        out: dict[str, PrefixTransformer] = {}
        known = set()
        for info in builtin:
            known.add((info.plural, info.group))
            transformer = self.transformer_for(info.plural, info.group)
            if transformer is not None:
                out.setdefault(f"{base}/{info.plural}/", transformer)
        for resources, transformer in self.entries:
            for name in resources:
                plural, _, group = name.partition(".")
                if plural != "*" and group and (plural, group) not in known:
                    out.setdefault(f"{base}/{group}/{plural}/", transformer)
        return list(out.items())


def load_encryption_config(path: Path) -> EncryptionConfig:
    """Read and parse the file at `path`. Raises ValueError (also for an unreadable file)."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"error reading encryption provider configuration file {str(path)!r}: {e}") from None
    return parse_encryption_config(doc)


def parse_encryption_config(doc: Any) -> EncryptionConfig:
    """Validate a decoded EncryptionConfiguration. Raises ValueError listing every error."""
    errs: list[str] = []
    if not isinstance(doc, dict):
        raise ValueError("encryption provider configuration is not an object")
    if doc.get("apiVersion") != _API_VERSION or doc.get("kind") != _KIND:
        errs.append(f"apiVersion/kind: must be {_API_VERSION} {_KIND}")
    resources = doc.get("resources")
    if not isinstance(resources, list) or not resources:
        errs.append("resources: Required value: resources is a required field")
        resources = []
    entries = []
    for i, entry in enumerate(resources):
        parsed = _entry(entry, f"resources[{i}]", errs)
        if parsed is not None:
            entries.append(parsed)
    if errs:
        raise ValueError("invalid encryption provider configuration: " + "; ".join(errs))
    return EncryptionConfig(tuple(entries))


def _entry(entry: Any, path: str, errs: list[str]) -> tuple[tuple[str, ...], PrefixTransformer] | None:
    if not isinstance(entry, dict):
        errs.append(f"{path}: Invalid value: must be an object")
        return None
    names = entry.get("resources")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        errs.append(f"{path}.resources: Required value: resources is a required field")
    providers = entry.get("providers")
    if not isinstance(providers, list) or not providers:
        errs.append(f"{path}.providers: Required value: providers is a required field")
        return None
    built: list[tuple[bytes, Transformer]] = []
    for j, provider in enumerate(providers):
        built.extend(_provider(provider, f"{path}.providers[{j}]", errs))
    if not built or not isinstance(names, list):
        return None
    return tuple(str(n) for n in names), PrefixTransformer(built)


def _provider(provider: Any, path: str, errs: list[str]) -> list[tuple[bytes, Transformer]]:
    if not isinstance(provider, dict) or len(provider) != 1:
        errs.append(f"{path}: Invalid value: exactly one provider must be configured")
        return []
    (kind, spec), = provider.items()
    if kind == "identity":
        return [(b"", IdentityTransformer())]
    if kind not in _CIPHERS:
        errs.append(f"{path}: Unsupported value: {kind!r}: supported values: \"aesgcm\", \"identity\", \"secretbox\"")
        return []
    keys = spec.get("keys") if isinstance(spec, dict) else None
    if not isinstance(keys, list) or not keys:
        errs.append(f"{path}.{kind}.keys: Required value: keys is a required field")
        return []
    out: list[tuple[bytes, Transformer]] = []
    seen: set[str] = set()
    for k, key in enumerate(keys):
        where = f"{path}.{kind}.keys[{k}]"
        name = key.get("name") if isinstance(key, dict) else None
        if not isinstance(name, str) or not name or ":" in name:
            errs.append(f"{where}.name: Required value: key name is required and may not contain ':'")
            continue
        if name in seen:
            errs.append(f"{where}.name: Duplicate value: {name!r}")
            continue
        seen.add(name)
        try:
            secret = base64.b64decode(str(key.get("secret") or ""), validate=True)
            out.append((f"k8s:enc:{kind}:v1:{name}:".encode(), _CIPHERS[kind](secret)))
        except (binascii.Error, ValueError) as e:
            errs.append(f'{where}.secret: Invalid value: "REDACTED": {e}')
    return out
