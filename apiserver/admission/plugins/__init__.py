"""The admission plugins kube-apiserver enables by default that picokube serves, one per file."""

from apiserver.admission.plugins.certificates import (
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
)
from apiserver.admission.plugins.default_storage_class import DefaultStorageClass
from apiserver.admission.plugins.default_toleration_seconds import DefaultTolerationSeconds
from apiserver.admission.plugins.limit_ranger import LimitRanger
from apiserver.admission.plugins.namespace_lifecycle import NamespaceLifecycle
from apiserver.admission.plugins.node_restriction import NodeRestriction
from apiserver.admission.plugins.priority import Priority
from apiserver.admission.plugins.resource_quota import ResourceQuota
from apiserver.admission.plugins.service_account import ServiceAccount
from apiserver.admission.plugins.storage_object_in_use_protection import StorageObjectInUseProtection

__all__ = ["CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
           "DefaultTolerationSeconds", "LimitRanger", "NamespaceLifecycle", "NodeRestriction", "Priority",
           "ResourceQuota", "ServiceAccount", "DefaultStorageClass", "StorageObjectInUseProtection"]
