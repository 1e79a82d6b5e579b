"""Typed wire models for the kinds picokube serves (k8s.io/api in miniature)."""

from kube.api.apps_v1 import *  # noqa: F403
from kube.api.apps_v1 import __all__ as _apps
from kube.api.apps_v1_daemonset import *  # noqa: F403
from kube.api.apps_v1_daemonset import __all__ as _apps_daemonset
from kube.api.apps_v1_statefulset import *  # noqa: F403
from kube.api.apps_v1_statefulset import __all__ as _statefulset
from kube.api.base import KubeModel, KubeObject, T_Object
from kube.api.batch_v1 import *  # noqa: F403
from kube.api.batch_v1 import __all__ as _batch
from kube.api.batch_v1_cronjob import *  # noqa: F403
from kube.api.batch_v1_cronjob import __all__ as _cronjob
from kube.api.certificates_v1 import *  # noqa: F403
from kube.api.certificates_v1 import __all__ as _certificates
from kube.api.coordination_v1 import *  # noqa: F403
from kube.api.coordination_v1 import __all__ as _coord
from kube.api.core_v1 import *  # noqa: F403
from kube.api.core_v1 import __all__ as _core
from kube.api.core_v1_services import *  # noqa: F403
from kube.api.core_v1_services import __all__ as _services
from kube.api.core_v1_storage import *  # noqa: F403
from kube.api.core_v1_storage import __all__ as _storage_core
from kube.api.core_v1_volumes import *  # noqa: F403
from kube.api.core_v1_volumes import __all__ as _volumes
from kube.api.core_v1_workloads import *  # noqa: F403
from kube.api.core_v1_workloads import __all__ as _core_workloads
from kube.api.discovery_v1 import *  # noqa: F403
from kube.api.discovery_v1 import __all__ as _discovery
from kube.api.meta import *  # noqa: F403
from kube.api.meta import __all__ as _meta
from kube.api.policy_v1 import *  # noqa: F403
from kube.api.policy_v1 import __all__ as _policy
from kube.api.registry import DynamicObject, dynamic_model, model_for_kind, model_for_resource
from kube.api.storage_v1 import *  # noqa: F403
from kube.api.storage_v1 import __all__ as _storage

__all__ = ["KubeModel", "KubeObject", "T_Object", "DynamicObject", "dynamic_model", "model_for_kind",
           "model_for_resource",
           *_apps, *_apps_daemonset, *_coord, *_core, *_services, *_discovery, *_meta, *_statefulset,
           *_core_workloads, *_policy, *_batch, *_cronjob, *_volumes, *_storage_core, *_storage,
           *_certificates]
