"""Admission: the plugins every write passes between authorization and storage.

`interfaces` defines what a plugin sees (`Attributes`) and the two kinds of plugin, `chain`
runs them (mutating, then validating), `plugins/` holds one plugin per file, and
`default_chain` assembles kube-apiserver's default order for the plugins picokube serves.
"""

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interfaces import Attributes, MutationInterface, Operation, ValidationInterface

__all__ = ["AdmissionChain", "Attributes", "MutationInterface", "Operation", "ValidationInterface"]
