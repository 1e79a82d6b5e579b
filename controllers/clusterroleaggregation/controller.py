"""The clusterrole-aggregation controller: an aggregated ClusterRole's rules are the union of
the rules of the ClusterRoles its aggregationRule selects.

Mirrors pkg/controller/clusterroleaggregation's ClusterRoleAggregationController:
- any ClusterRole added, changed or deleted queues every ClusterRole that has an
  aggregationRule (a label change anywhere can change any aggregate, and aggregates nest:
  `admin` selects `edit`, which selects `view`);
- the reconcile walks the selectors in order, the selected roles sorted by name (the role
  itself skipped), and appends each rule not already present, so the result is stable;
- only when that differs from the stored rules does it write, with an update carrying the
  resourceVersion it read: a concurrent change is a Conflict, retried from fresh state.
Guarantee: once the roles stop changing, every aggregated role's rules equal the union of
its selected roles' rules.
"""

from __future__ import annotations

import logging

from controllers.clusterroleaggregation._api import ClusterRole, PolicyRule
from controllers.context import ControllerContext
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import NotFound
from kube.selectors import selector_from_label_selector
from kube.workqueue import WorkQueue

__all__ = ["ClusterRoleAggregationController", "aggregate_rules"]

logger = logging.getLogger(__name__)


def aggregate_rules(role: ClusterRole, roles: list[ClusterRole]) -> list[PolicyRule]:
    """The rules `role`'s aggregationRule yields over `roles`: selector order, then name order, no duplicates."""
    rules: list[PolicyRule] = []
    seen: list[dict[str, object]] = []
    selectors = (role.aggregation_rule.cluster_role_selectors if role.aggregation_rule else None) or []
    for raw in selectors:
        try:
            selector = selector_from_label_selector(raw)
        except (ValueError, KeyError, TypeError):
            continue  # upstream skips an unparsable selector too
        for other in sorted(roles, key=lambda r: str(r.metadata.name)):
            if other.metadata.name == role.metadata.name or not selector.matches(other.metadata.labels or {}):
                continue
            for rule in other.rules or []:
                wire = rule.to_dict()
                if wire not in seen:
                    seen.append(wire)
                    rules.append(rule)
    return rules


class ClusterRoleAggregationController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.roles = ctx.informers.informer_for(ClusterRole)
        self.queue: WorkQueue[str] = WorkQueue(name="clusterrole-aggregation", clock=ctx.clock)
        self.roles.add_event_handler(EventHandler(
            on_add=lambda _r: self._enqueue_aggregated(), on_update=lambda _o, _n: self._enqueue_aggregated(),
            on_delete=lambda _r: self._enqueue_aggregated()))

    def _enqueue_aggregated(self) -> None:
        for role in self.roles.store.list():
            if role.aggregation_rule is not None:
                self.queue.add(str(role.metadata.name))

    async def run(self) -> None:
        try:
            await run_workers("clusterrole-aggregation", self.queue, self.reconcile, workers=1)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        role = self.roles.store.get(request.name)
        if role is None or role.aggregation_rule is None:
            return None
        rules = aggregate_rules(role, self.roles.store.list())
        if [r.to_dict() for r in rules] == [r.to_dict() for r in role.rules or []]:
            return None
        updated = role.model_copy(deep=True)
        updated.rules = rules
        try:
            await self.client.update(updated)
        except NotFound:
            return None
        logger.info("Aggregated ClusterRole rules", extra={"clusterrole": request.name, "rules": len(rules)})
        return None
