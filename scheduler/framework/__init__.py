"""The scheduling framework: extension points, per-cycle state, the runtime, and fit errors."""

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.fit_error import NO_NODES_AVAILABLE, Diagnosis, FitError
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
                                            is_success,
)
from scheduler.framework.resource import Resource, node_allocatable, pod_non_zero_requests, pod_requests
from scheduler.framework.runtime import EXTENSION_POINTS, Framework, Profile

__all__ = ["CycleState", "Diagnosis", "FitError", "NO_NODES_AVAILABLE", "MAX_SCORE", "MIN_SCORE", "Code",
           "FilterPlugin", "Plugin", "PluginFactory", "PreFilterPlugin", "ScoreNormalizer", "ScorePlugin",
           "Status", "is_success", "Resource", "node_allocatable", "pod_non_zero_requests", "pod_requests",
           "Framework", "Profile", "EXTENSION_POINTS", "PostFilterPlugin", "PostFilterResult", "PreScorePlugin"]
