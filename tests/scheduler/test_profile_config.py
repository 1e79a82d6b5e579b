"""--config: KubeSchedulerConfiguration files become profiles, with upstream's merge rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.framework import Framework
from scheduler.plugins import DEFAULT_PLUGINS, IN_TREE_REGISTRY
from scheduler.profile_config import ConfigError, load_config, parse_duration

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def load(tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.yaml"
    path.write_text(HEADER + body)
    return load_config(path)


def test_no_profiles_means_the_default_profile(tmp_path: Path) -> None:
    cfg = load(tmp_path, "percentageOfNodesToScore: 20\n")
    assert cfg.percentage_of_nodes_to_score == 20
    (profile,) = cfg.profiles
    assert profile.scheduler_name == "default-scheduler" and profile.plugins == DEFAULT_PLUGINS


def test_per_point_disable_and_weights_and_args(tmp_path: Path) -> None:
    cfg = load(tmp_path, """\
profiles:
- plugins:
    score:
      disabled: [{name: ImageLocality}]
      enabled: [{name: NodeResourcesBalancedAllocation, weight: 5}]
    filter:
      disabled: [{name: NodePorts}]
  pluginConfig:
  - {name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}
""")
    fwk = Framework(cfg.profiles[0], IN_TREE_REGISTRY)
    assert "ImageLocality" not in [p.name for p in fwk.score_plugins]
    assert "NodePorts" not in [p.name for p in fwk.filter_plugins]
    assert "NodePorts" in [p.name for p in fwk.pre_filter_plugins]  # only the filter point was switched off
    assert cfg.profiles[0].score_weights["NodeResourcesBalancedAllocation"] == 5
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"] == {"scoringStrategy": {"type": "MostAllocated"}}


def test_multi_point_star_replaces_the_defaults(tmp_path: Path) -> None:
    cfg = load(tmp_path, """\
profiles:
- schedulerName: packer
  plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: NodeName}, {name: NodeResourcesFit, weight: 3}]
""")
    profile = cfg.profiles[0]
    assert (profile.scheduler_name, profile.plugins, dict(profile.score_weights)) == \
        ("packer", ("NodeName", "NodeResourcesFit"), {"NodeResourcesFit": 3})


@pytest.mark.parametrize(("body", "message"), [
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: Bogus}]\n", "plugin 'Bogus' is not in the registry"),
    ("profiles:\n- plugins:\n    reserve: {}\n", "unsupported extension point(s) reserve"),
    ("profiles:\n- {}\n- {}\n", "schedulerName must be unique"),
    ("percentageOfNodesToScore: 150\n", "percentageOfNodesToScore"),
    ("profiles:\n- pluginConfig:\n  - {name: NodeResourcesFit, args: {scoringStrategy: {type: Nope}}}\n",
     "unknown scoring strategy 'Nope'"),
    ("leaderElection: {leaderElect: true, leaseDuration: soon}\n", "invalid duration 'soon'"),
])
def test_errors_name_the_field(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(tmp_path, body)


def test_wrong_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(ConfigError, match="expected apiVersion"):
        load_config(path)


def test_durations() -> None:
    assert parse_duration("15s", "f") == 15 and parse_duration("1m30s", "f") == 90
    assert parse_duration("500ms", "f") == 0.5 and parse_duration(3, "f") == 3
