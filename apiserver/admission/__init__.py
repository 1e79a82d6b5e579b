"""Admission: checks and defaults that need the request's user and the object's body.

Authorization only sees the request's attributes; for a create the object's name is in
the body, so rules such as "a kubelet may only create its own Node" are enforced here.
"""

from apiserver.admission.node_restriction import node_restriction

__all__ = ["node_restriction"]
