"""Turning an object's `spec.selector` into a matcher, the way controllers must read it.

Mirrors metav1.LabelSelectorAsSelector as the ReplicaSet and Deployment controllers use it,
with one deliberate difference: an empty or malformed selector gives None ("selects
nothing"), never "selects everything", so a bad object can never make a controller adopt
or count every pod of its namespace.
"""

from __future__ import annotations

import logging

from kube.api import LabelSelector as LabelSelectorSpec
from kube.selectors import LabelSelector, selector_from_label_selector

__all__ = ["selector_of"]

logger = logging.getLogger(__name__)


def selector_of(spec: LabelSelectorSpec | None) -> LabelSelector | None:
    """The matcher for a metav1.LabelSelector, or None when it is empty or invalid."""
    if spec is None:
        return None
    try:
        selector = selector_from_label_selector(spec.to_dict())
    except (ValueError, KeyError) as e:
        logger.debug("Invalid label selector", extra={"error": str(e)})
        return None
    return None if selector.empty() else selector
