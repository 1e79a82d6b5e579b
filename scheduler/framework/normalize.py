"""Score normalization helpers shared by score plugins (kube-scheduler `helper.DefaultNormalizeScore`)."""

from __future__ import annotations

from scheduler.framework.interfaces import MAX_SCORE

__all__ = ["default_normalize_score", "min_max_normalize"]


def default_normalize_score(scores: dict[str, int], *, reverse: bool = False) -> None:
    """Scale scores so the highest becomes MAX_SCORE (in place); `reverse` flips them afterwards.

    All zero: every node gets 0, or MAX_SCORE when reversed (nothing to prefer or avoid).
    """
    highest = max(scores.values(), default=0)
    for node, score in scores.items():
        scaled = score * MAX_SCORE // highest if highest > 0 else 0
        scores[node] = MAX_SCORE - scaled if reverse else scaled


def min_max_normalize(scores: dict[str, int | float]) -> dict[str, int]:
    """Map the lowest score to 0 and the highest to MAX_SCORE (all equal: all 0)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return {node: 0 for node in scores}
    return {node: int(MAX_SCORE * (s - low) / (high - low)) for node, s in scores.items()}
