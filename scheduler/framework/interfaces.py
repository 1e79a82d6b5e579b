"""The scheduling framework's extension points: Status, and the plugin protocols.

Mirrors kube-scheduler `framework/interface.go`:
- a plugin is any object with a `name`; which extension points it serves is decided by which
  protocol it satisfies (`PreFilterPlugin`, `FilterPlugin`, `PostFilterPlugin`,
  `PreScorePlugin`, `ScorePlugin`, `ScoreNormalizer`), so a new plugin is one file and one
  registry entry. Reserve and Bind are the scheduler's own: the cache assumes the pod, the
  binder POSTs pods/binding;
- PreFilter and PreScore see every node of the snapshot once per cycle, for plugins whose
  verdict depends on other nodes' pods (topology spread, inter-pod affinity);
- plugins are pure: they read the pod, the `NodeInfo` and the `CycleState`, do no I/O, and
  must not mutate the pod or the NodeInfo (the cache owns them);
- `None` returned where a Status is expected means success; `Status.skip()` from PreFilter
  or PreScore means the plugin's Filter or Score is not run for this pod this cycle (it
  would accept every node, or score them all alike), which keeps large clusters fast;
- scores are integers in 0..MAX_SCORE; a `ScoreNormalizer` may rescale a plugin's scores
  over all feasible nodes before weights are applied.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kube.api import Pod
from scheduler.framework.cycle_state import CycleState

if TYPE_CHECKING:
    from scheduler.cache import NodeInfo
    from scheduler.framework.fit_error import Diagnosis

__all__ = ["Code", "Status", "Plugin", "PreFilterPlugin", "FilterPlugin", "PostFilterPlugin", "PostFilterResult",
           "PreScorePlugin", "ScorePlugin", "ScoreNormalizer", "PluginFactory", "MAX_SCORE", "MIN_SCORE",
           "is_success"]

MAX_SCORE = 100
MIN_SCORE = 0


class Code(enum.Enum):
    """The outcome of running a plugin (kube-scheduler `framework.Code`)."""

    SUCCESS = "Success"
    ERROR = "Error"                # an internal failure: the pod is retried, not reported as unschedulable
    UNSCHEDULABLE = "Unschedulable"  # the node does not fit now; it might after preemption
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"  # nothing done to other pods would help
    SKIP = "Skip"  # from PreFilter / PreScore: this plugin has nothing to say for this pod this cycle


@dataclass(frozen=True)
class Status:
    """A plugin's verdict: a code, human-readable reasons, and the plugin that gave it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @classmethod
    def error(cls, reason: str, *, plugin: str = "") -> Status:
        return cls(Code.ERROR, (reason,), plugin)

    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable (resolvable or not): the node is not feasible for this pod."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin else Status(self.code, self.reasons, plugin)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


def is_success(status: Status | None) -> bool:
    return status is None or status.is_success()


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreFilterPlugin(Protocol):
    """Runs once per scheduling cycle, before any Filter; may precompute into the CycleState.

    A rejecting status makes every node infeasible with that status.
    """

    name: str

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None: ...


@runtime_checkable
class FilterPlugin(Protocol):
    """Decides whether `pod` can run on one node. Called for many nodes; must be cheap."""

    name: str

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@dataclass(frozen=True)
class PostFilterResult:
    """What a PostFilter found: a node the pod may run on once `victims` (pod keys) are gone."""

    nominated_node: str
    victims: tuple[Pod, ...] = ()


@runtime_checkable
class PostFilterPlugin(Protocol):
    """Runs when no node fits (preemption): may nominate a node and the pods to remove from it.

    Pure like the others: it only decides; the scheduler deletes the victims and records the
    nomination.
    """

    name: str

    def post_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                    diagnosis: Diagnosis) -> PostFilterResult | None: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    """Runs once before Score with the feasible nodes and every node; may precompute into the state."""

    name: str

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Ranks a feasible node for `pod`: an int in MIN_SCORE..MAX_SCORE, higher is better."""

    name: str

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...


@runtime_checkable
class ScoreNormalizer(Protocol):
    """Rescales one score plugin's results (node name -> score) in place, into 0..MAX_SCORE."""

    name: str

    def normalize_scores(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None: ...


PluginFactory = Callable[[Mapping[str, Any]], Plugin]
"""Builds a plugin from its arguments (the profile's `pluginConfig` entry, often empty)."""
