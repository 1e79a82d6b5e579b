"""Priority: `priorityClassName` resolves to `spec.priority` and `preemptionPolicy`.

From a PriorityClass or one of the two built-in system classes; without a name the
`globalDefault` class applies, else 0. An unknown class, or a user-set `spec.priority` that
disagrees with the class, is 403 with upstream's message. Classes are read from the watch
cache, and from storage when the cache has not seen a class yet.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apiserver.admission.interfaces import Attributes, Obj
from apiserver.admission.plugins._pods import PodCreateMutation, forbidden
from apiserver.registry.lister import CacheLister
from kube.errors import NotFound

__all__ = ["Priority", "SYSTEM_PRIORITY_CLASSES"]

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_DEFAULT_POLICY = "PreemptLowerPriority"


class Priority(PodCreateMutation):
    name = "Priority"

    def __init__(self, classes: CacheLister, get_class: Callable[[str], Awaitable[Obj]]) -> None:
        self.classes, self.get_class = classes, get_class

    async def _named(self, pod: str, class_name: str) -> tuple[int, str]:
        if class_name in SYSTEM_PRIORITY_CLASSES:
            return SYSTEM_PRIORITY_CLASSES[class_name], _DEFAULT_POLICY
        pc = self.classes.get(None, class_name)
        if pc is None:
            try:
                pc = await self.get_class(class_name)
            except NotFound:
                raise forbidden(pod, f"no PriorityClass with name {class_name} was found") from None
        return int(pc.get("value", 0)), str(pc.get("preemptionPolicy") or _DEFAULT_POLICY)

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        class_name = spec.get("priorityClassName")
        policy: str | None = None
        if class_name:
            value, policy = await self._named(attrs.name, str(class_name))
        else:
            default = next((pc for pc in self.classes.iter() if pc.get("globalDefault")), None)
            value = 0
            if default is not None:
                spec["priorityClassName"] = default["metadata"]["name"]
                value, policy = int(default.get("value", 0)), str(default.get("preemptionPolicy") or _DEFAULT_POLICY)
        given = spec.get("priority")
        if given is not None and given != value:
            raise forbidden(attrs.name, f"the integer value of priority ({given}) must not be provided in pod spec; "
                                        f"priority admission controller computed {value} from the given "
                                        "PriorityClass name")
        spec["priority"] = value
        if policy:
            spec.setdefault("preemptionPolicy", policy)
