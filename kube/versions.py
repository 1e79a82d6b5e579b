"""Kubernetes API version ordering: v2 > v1 > v11beta2 > v10beta3 > v3beta1 > v12alpha1 > v1alpha1 > other.

Mirrors apimachinery's CompareKubeAwareVersionStrings, which decides a group's preferred
version (the first in discovery): GA before beta before alpha, higher major first, then
higher minor; anything that is not of this shape sorts last, alphabetically.
"""

from __future__ import annotations

import re

__all__ = ["version_priority", "sort_versions"]

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 3, "beta": 2, "alpha": 1}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """A sort key: smaller sorts first, so the preferred version comes first."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (1, 0, 0, version)
    major, stability, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return (0, -_STABILITY[stability], -major * 1000 - minor if stability else -major, "")


def sort_versions(versions: list[str]) -> list[str]:
    return sorted(versions, key=version_priority)
