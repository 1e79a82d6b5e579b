"""Admission: checks and defaults that need the request's user and the object's body.

Authorization only sees the request's attributes; for a create the object's name is in
the body, so rules such as "a kubelet may only create its own Node" are enforced here, and
pods get the defaults kube-apiserver's admission chain gives them (`pod_defaults`).
"""

from apiserver.admission.node_restriction import node_restriction
from apiserver.admission.pod_defaults import admit_pod
from apiserver.admission.resource_quota import QuotaAdmission

__all__ = ["QuotaAdmission", "admit_pod", "node_restriction"]
