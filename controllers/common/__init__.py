"""Helpers every controller shares: owner references, active pods, claiming.

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
from controllers.common.pods import is_pod_active
from controllers.common.selection import selector_of

__all__ = [
                                      "CONTROLLER_UID_INDEX",
                                      "ORPHAN_NAMESPACE_INDEX",
                                      "ClaimActions",
                                      "claim_objects",
                                      "controller_uid_index",
                                      "is_controlled_by",
                                      "is_pod_active",
                                      "new_controller_ref",
                                      "orphan_namespace_index",
                                      "resolve_controller_ref",
                                      "selector_of",
]
