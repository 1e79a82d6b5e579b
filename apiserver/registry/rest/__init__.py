"""REST storages: one object per resource and per subresource, each serving the verbs it implements."""

from apiserver.registry.rest.access_review import SelfSubjectAccessReviewStorage, SubjectAccessReviewStorage
from apiserver.registry.rest.binding import BindingStorage
from apiserver.registry.rest.ephemeral_containers import EphemeralContainersStorage
from apiserver.registry.rest.eviction import EvictionStorage
from apiserver.registry.rest.interfaces import (
    CollectionDeleter,
    Connecter,
    Context,
    Creater,
    Getter,
    GracefulDeleter,
    Kind,
    Lister,
    Storage,
    UpdateFunc,
    Updater,
    Watcher,
    verbs_of,
)
from apiserver.registry.rest.kubelet_client import KubeletClient
from apiserver.registry.rest.log import LogStorage
from apiserver.registry.rest.pod_stream import PodStreamStorage
from apiserver.registry.rest.proxy import NodeProxyStorage, PodProxyStorage, ServiceProxyStorage
from apiserver.registry.rest.resource import ResourceStorage
from apiserver.registry.rest.rules_review import SelfSubjectRulesReviewStorage
from apiserver.registry.rest.scale import ScaleStorage
from apiserver.registry.rest.self_subject_review import SelfSubjectReviewStorage
from apiserver.registry.rest.status import FinalizeStorage, StatusStorage
from apiserver.registry.rest.token import TokenRequestStorage
from apiserver.registry.rest.upgrade import ProxyTransport

__all__ = ["BindingStorage", "CollectionDeleter", "Connecter", "Context", "Creater", "EphemeralContainersStorage",
           "EvictionStorage", "FinalizeStorage", "GracefulDeleter", "Getter", "Kind", "KubeletClient", "Lister",
           "LogStorage", "NodeProxyStorage", "PodProxyStorage", "PodStreamStorage", "ProxyTransport",
           "ResourceStorage", "ServiceProxyStorage",
           "ScaleStorage", "SelfSubjectAccessReviewStorage", "SubjectAccessReviewStorage", "SelfSubjectReviewStorage",
           "SelfSubjectRulesReviewStorage", "StatusStorage", "Storage", "TokenRequestStorage",
           "UpdateFunc", "Updater", "Watcher", "verbs_of"]
