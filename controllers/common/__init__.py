"""Helpers every controller shares: owner references, pod predicates, claiming, time.

Mirrors the parts of Kubernetes' pkg/controller (controller_utils.go,
controller_ref_manager.go) that more than one controller needs.
"""

from controllers.common.claim import ClaimActions, claim_objects
from controllers.common.owner import (
                                      CONTROLLER_UID_INDEX,
                                      ORPHAN_NAMESPACE_INDEX,
                                      controller_uid_index,
                                      is_controlled_by,
                                      new_controller_ref,
                                      orphan_namespace_index,
                                      resolve_controller_ref,
)
from controllers.common.pods import (
                                      is_pod_active,
                                      is_pod_available,
                                      is_pod_ready,
                                      pod_ready_time,
)
from controllers.common.selection import selector_of
from controllers.common.timeutil import format_time, parse_time

__all__ = [
                                      "CONTROLLER_UID_INDEX",
                                      "ORPHAN_NAMESPACE_INDEX",
                                      "ClaimActions",
                                      "claim_objects",
                                      "controller_uid_index",
                                      "format_time",
                                      "is_controlled_by",
                                      "is_pod_active",
                                      "is_pod_available",
                                      "is_pod_ready",
                                      "new_controller_ref",
                                      "orphan_namespace_index",
                                      "parse_time",
                                      "pod_ready_time",
                                      "resolve_controller_ref",
                                      "selector_of",
]
