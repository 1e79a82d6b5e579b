"""`--config FILE`: a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) turned into profiles.

Reads the fields picokube acts on, with upstream's merge rules:
- `percentageOfNodesToScore`, `podInitialBackoffSeconds`, `podMaxBackoffSeconds`,
  `clientConnection.kubeconfig`, and `leaderElection` (leaderElect, leaseDuration,
  renewDeadline, retryPeriod as durations like `15s`);
- `profiles[]`: each starts from the default plugins and weights; `plugins.multiPoint`
  disables (`*` for all defaults) and enables plugins at every extension point they serve,
  with optional score `weight`; `plugins.<point>` (preFilter, filter, postFilter, preScore,
  score) disables or enables a plugin at that point only; `pluginConfig[]` gives a plugin
  its `args` (for example NodeResourcesFit `scoringStrategy.type: MostAllocated`).
Anything it cannot honour (an unknown plugin, extension point or kind) is a `ConfigError`
naming the field, never silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kube.component import LeaderElection
from scheduler.config import DEFAULT_SCHEDULER_NAME, LEASE
from scheduler.framework import EXTENSION_POINTS, Framework, Profile
from scheduler.framework.interfaces import PluginFactory
from scheduler.plugins import DEFAULT_PLUGINS, DEFAULT_SCORE_WEIGHTS, IN_TREE_REGISTRY

__all__ = ["ConfigError", "SchedulerFileConfig", "default_profile", "load_config", "parse_duration"]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")


class ConfigError(ValueError):
    """The configuration file cannot be used as written."""


@dataclass(frozen=True)
class SchedulerFileConfig:
    profiles: tuple[Profile, ...]
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: float | None = None
    pod_max_backoff_seconds: float | None = None
    kubeconfig: str | None = None
    leader_election: LeaderElection | None = None
    leader_elect: bool | None = None
    """`leaderElection.leaderElect` when the file sets it (it then overrides --leader-elect)."""


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
    return Profile(scheduler_name=scheduler_name, plugins=DEFAULT_PLUGINS, score_weights=dict(DEFAULT_SCORE_WEIGHTS))


def parse_duration(value: Any, field: str) -> float:
    """A Go duration (`15s`, `1m30s`, `500ms`) or a number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    match = _DURATION.match(str(value)) if value else None
    if match is None or not any(match.groups()):
        raise ConfigError(f"{field}: invalid duration {value!r} (use e.g. 15s, 1m30s, 500ms)")
    h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
    return h * 3600 + m * 60 + s + ms / 1000


def _names(entries: Any, field: str) -> list[tuple[str, int | None]]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigError(f"{field}: must be a list of {{name, weight}}")
    out: list[tuple[str, int | None]] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise ConfigError(f"{field}[{i}]: must have a name")
        weight = e.get("weight")
        if weight is not None and (not isinstance(weight, int) or weight <= 0):
            raise ConfigError(f"{field}[{i}].weight: must be a positive integer")
        out.append((e["name"], weight))
    return out


def _check_known(name: str, field: str, registry: Mapping[str, PluginFactory]) -> None:
    if name != "*" and name not in registry:
        raise ConfigError(f"{field}: plugin {name!r} is not in the registry (known: {', '.join(sorted(registry))})")


def _profile(raw: Any, i: int, registry: Mapping[str, PluginFactory]) -> Profile:
    where = f"profiles[{i}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be an object")
    name = raw.get("schedulerName") or DEFAULT_SCHEDULER_NAME
    plugins_cfg = raw.get("plugins") or {}
    if not isinstance(plugins_cfg, dict):
        raise ConfigError(f"{where}.plugins: must be an object")
    unknown = set(plugins_cfg) - {"multiPoint", *EXTENSION_POINTS}
    if unknown:
        raise ConfigError(f"{where}.plugins: unsupported extension point(s) {', '.join(sorted(unknown))}")
    plugins, weights = list(DEFAULT_PLUGINS), dict(DEFAULT_SCORE_WEIGHTS)
    multi = plugins_cfg.get("multiPoint") or {}
    for pname, _ in _names(multi.get("disabled"), f"{where}.plugins.multiPoint.disabled"):
        _check_known(pname, f"{where}.plugins.multiPoint.disabled", registry)
        plugins = [] if pname == "*" else [p for p in plugins if p != pname]
        if pname == "*":
            weights = {}
        else:
            weights.pop(pname, None)
    for pname, weight in _names(multi.get("enabled"), f"{where}.plugins.multiPoint.enabled"):
        _check_known(pname, f"{where}.plugins.multiPoint.enabled", registry)
        if pname not in plugins:
            plugins.append(pname)
        if weight is not None:
            weights[pname] = weight
    disabled: dict[str, set[str]] = {}
    only_at: dict[str, set[str]] = {}  # plugins enabled at single points only
    for point in EXTENSION_POINTS:
        cfg = plugins_cfg.get(point) or {}
        field = f"{where}.plugins.{point}"
        enabled_here = _names(cfg.get("enabled"), f"{field}.enabled")
        for pname, _ in _names(cfg.get("disabled"), f"{field}.disabled"):
            _check_known(pname, f"{field}.disabled", registry)
            disabled.setdefault(point, set()).update(plugins if pname == "*" else [pname])
        for pname, weight in enabled_here:
            _check_known(pname, f"{field}.enabled", registry)
            disabled.get(point, set()).discard(pname)
            if pname not in plugins:
                plugins.append(pname)
                only_at.setdefault(pname, set())
            if pname in only_at:
                only_at[pname].add(point)
            if weight is not None and point == "score":
                weights[pname] = weight
    for pname, points in only_at.items():
        for point in EXTENSION_POINTS:
            if point not in points:
                disabled.setdefault(point, set()).add(pname)
    args: dict[str, Mapping[str, Any]] = {}
    plugin_config = raw.get("pluginConfig") or []
    if not isinstance(plugin_config, list):
        raise ConfigError(f"{where}.pluginConfig: must be a list")
    for j, entry in enumerate(plugin_config):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigError(f"{where}.pluginConfig[{j}]: must have a name")
        _check_known(entry["name"], f"{where}.pluginConfig[{j}]", registry)
        value = entry.get("args") or {}
        if not isinstance(value, dict):
            raise ConfigError(f"{where}.pluginConfig[{j}].args: must be an object")
        args[entry["name"]] = value
    profile = Profile(scheduler_name=name, plugins=tuple(plugins), score_weights=weights, plugin_args=args,
                      disabled={k: frozenset(v) for k, v in disabled.items()})
    try:  # build it once now, so a bad plugin argument is reported at startup with its place
        Framework(profile, registry)
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None
    return profile


def load_config(path: str | Path, registry: Mapping[str, PluginFactory] = IN_TREE_REGISTRY) -> SchedulerFileConfig:
    """Read and check a KubeSchedulerConfiguration file."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: must be a {KIND} object")
    if raw.get("kind") != KIND or raw.get("apiVersion") != API_VERSION:
        raise ConfigError(f"{path}: expected apiVersion {API_VERSION} and kind {KIND}, got "
                          f"{raw.get('apiVersion')!r} / {raw.get('kind')!r}")
    profiles_raw = raw.get("profiles") or [{}]
    if not isinstance(profiles_raw, list):
        raise ConfigError("profiles: must be a list")
    profiles = tuple(_profile(p, i, registry) for i, p in enumerate(profiles_raw))
    names = [p.scheduler_name for p in profiles]
    if len(set(names)) != len(names):
        raise ConfigError("profiles: schedulerName must be unique")
    pct = raw.get("percentageOfNodesToScore")
    if pct is not None and (not isinstance(pct, int) or not 0 <= pct <= 100):
        raise ConfigError("percentageOfNodesToScore: must be an integer from 0 to 100")
    election = raw.get("leaderElection") or {}
    leader = None
    if election.get("leaderElect"):
        leader = LeaderElection(
            LEASE, lease_duration=parse_duration(election.get("leaseDuration", "15s"), "leaderElection.leaseDuration"),
            renew_deadline=parse_duration(election.get("renewDeadline", "10s"), "leaderElection.renewDeadline"),
            retry_period=parse_duration(election.get("retryPeriod", "2s"), "leaderElection.retryPeriod"))

    def seconds(field: str) -> float | None:
        value = raw.get(field)
        if value is None:
            return None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"{field}: must be a positive number of seconds")
        return float(value)

    return SchedulerFileConfig(profiles=profiles, percentage_of_nodes_to_score=pct,
                               pod_initial_backoff_seconds=seconds("podInitialBackoffSeconds"),
                               pod_max_backoff_seconds=seconds("podMaxBackoffSeconds"),
                               kubeconfig=(raw.get("clientConnection") or {}).get("kubeconfig"),
                               leader_election=leader, leader_elect=election.get("leaderElect"))
