"""The framework runtime: build a profile's plugins from a registry and run their extension points.

Mirrors kube-scheduler `framework/runtime/framework.go`:
- `Profile` names the plugins to run (in order), their score weights and arguments, and the
  extension points where an enabled plugin is switched off (KubeSchedulerConfiguration's
  per-point `disabled` lists);
- each plugin is built once by its registry factory; the extension points it serves are
  found from the protocols it satisfies;
- PostFilter plugins run in order until one nominates a node;
- Filter stops at the first plugin that rejects a node (the status names that plugin);
- Score sums `weight * score` over the score plugins, after each plugin's optional
  normalization; a score outside 0..MAX_SCORE is a plugin bug and raises.
Running a framework is synchronous and does no I/O; one instance may serve many cycles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kube.api import Pod
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import (
    MAX_SCORE,
    MIN_SCORE,
    Code,
    FilterPlugin,
    Plugin,
    PluginFactory,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreNormalizer,
    ScorePlugin,
    Status,
)

if TYPE_CHECKING:  # the cache imports framework.resource; a runtime import would be circular
    from scheduler.cache import NodeInfo
    from scheduler.framework.fit_error import Diagnosis

__all__ = ["Profile", "Framework", "EXTENSION_POINTS"]

EXTENSION_POINTS = ("preFilter", "filter", "postFilter", "preScore", "score")
_P = TypeVar("_P")


@dataclass(frozen=True)
class Profile:
    """One scheduling profile (KubeSchedulerProfile): which plugins run, and how."""

    scheduler_name: str = "default-scheduler"
    plugins: tuple[str, ...] = ()
    score_weights: Mapping[str, int] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    disabled: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """extension point -> names of enabled plugins that must not run there."""


class Framework:
    """The plugins of one profile, ready to run."""

    def __init__(self, profile: Profile, registry: Mapping[str, PluginFactory]) -> None:
        self.profile = profile
        self.plugins: list[Plugin] = []
        for name in profile.plugins:
            factory = registry.get(name)
            if factory is None:
                raise ValueError(f"plugin {name!r} is not in the registry")
            self.plugins.append(factory(profile.plugin_args.get(name, {})))
        # The extension points are runtime-checkable Protocols used as isinstance() filters; mypy
        # rejects a Protocol where type[T] is expected (python/mypy#4717), hence the ignores.
        self.pre_filter_plugins = self._serving("preFilter", PreFilterPlugin)  # type: ignore[type-abstract]
        self.filter_plugins = self._serving("filter", FilterPlugin)  # type: ignore[type-abstract]
        self.post_filter_plugins = self._serving("postFilter", PostFilterPlugin)  # type: ignore[type-abstract]
        self.score_plugins = self._serving("score", ScorePlugin)  # type: ignore[type-abstract]
        for p in self.post_filter_plugins:
            bind = getattr(p, "bind_filters", None)
            if bind is not None:
                bind(self.run_filter_plugins)
        scoring = {p.name for p in self.score_plugins}
        pre_score = self._serving("preScore", PreScorePlugin)  # type: ignore[type-abstract]
        self.pre_score_plugins = [p for p in pre_score if p.name in scoring]
        for name, weight in profile.score_weights.items():
            if weight <= 0:
                raise ValueError(f"score weight of {name!r} must be positive, got {weight}")

    def _serving(self, point: str, protocol: type[_P]) -> list[_P]:
        off = self.profile.disabled.get(point, frozenset())
        return [p for p in self.plugins if isinstance(p, protocol) and p.name not in off]

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """The first non-success PreFilter status, or None when all succeed."""
        for p in self.pre_filter_plugins:
            status = p.pre_filter(state, pod, nodes)
            if status is not None and status.code is Code.SKIP:
                state.skip_filter_plugins.add(p.name)
            elif status is not None and not status.is_success():
                return status.with_plugin(p.name)
        return None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """The first rejecting (or erroring) Filter status for this node, or None when it fits."""
        for p in self.filter_plugins:
            if p.name in state.skip_filter_plugins:
                continue
            status = p.filter(state, pod, node_info)
            if status is not None and not status.is_success():
                return status.with_plugin(p.name)
        return None

    def run_post_filter_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                                diagnosis: Diagnosis) -> PostFilterResult | None:
        """The first PostFilter nomination (preemption), or None when none can help."""
        for p in self.post_filter_plugins:
            result = p.post_filter(state, pod, nodes, diagnosis)
            if result is not None:
                return result
        return None

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                              nodes: Sequence[NodeInfo]) -> None:
        for p in self.pre_score_plugins:
            status = p.pre_score(state, pod, feasible, nodes)
            if status is not None and status.code is Code.SKIP:
                state.skip_score_plugins.add(p.name)
            elif status is not None and not status.is_success():
                raise RuntimeError(f"plugin {p.name} failed in PreScore: {status.message}")

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], *,
                          breakdown: dict[str, dict[str, int]] | None = None) -> dict[str, int]:
        """node name -> weighted total score over all score plugins; `breakdown`, when given,
        receives each plugin's weighted scores (plugin -> node -> score)."""
        totals = {n.name: 0 for n in nodes}
        for p in self.score_plugins:
            if p.name in state.skip_score_plugins:
                continue
            scores = {n.name: p.score(state, pod, n) for n in nodes}
            if isinstance(p, ScoreNormalizer):
                status = p.normalize_scores(state, pod, scores)
                if status is not None and not status.is_success():
                    raise RuntimeError(f"plugin {p.name} failed to normalize scores: {status.message}")
            weight = self.profile.score_weights.get(p.name, 1)
            for node, score in scores.items():
                if not MIN_SCORE <= score <= MAX_SCORE:
                    raise ValueError(f"plugin {p.name} scored node {node} {score}, outside "
                                     f"{MIN_SCORE}..{MAX_SCORE}")
                totals[node] += weight * score
            if breakdown is not None:
                breakdown[p.name] = {node: weight * score for node, score in scores.items()}
        return totals
