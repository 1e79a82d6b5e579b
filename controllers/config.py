"""The controller-manager's configuration, built once from flags in `__main__.py`."""

from __future__ import annotations

from dataclasses import dataclass

from kube.component import LeaderElection
from kube.tracing import TracingConfig

__all__ = ["LEASE", "USER_AGENT", "ControllerManagerConfig"]

USER_AGENT = "picokube-controller-manager"
LEASE = "kube-controller-manager"
"""The Lease in kube-system that --leader-elect candidates compete for."""


@dataclass(frozen=True)
class ControllerManagerConfig:
    kubeconfig: str
    concurrent_deployment_syncs: int = 5
    concurrent_replicaset_syncs: int = 5
    concurrent_service_endpoint_syncs: int = 5
    """Services whose EndpointSlices are reconciled at once."""
    concurrent_endpoint_syncs: int = 5
    """Services whose core/v1 Endpoints are reconciled at once."""
    concurrent_statefulset_syncs: int = 5
    concurrent_rc_syncs: int = 5
    """ReplicationControllers reconciled at once."""
    max_endpoints_per_slice: int = 100
    job_backoff_base_seconds: float = 10.0
    """The Job controller's first pod re-creation delay after a failure (doubling, capped at 6 minutes)."""
    """At most this many endpoints in one EndpointSlice (upstream allows 1 to 1000)."""
    log_level: str = "INFO"
    node_monitor_grace_period: float = 40.0
    """Seconds without a Lease renewal before a node is Unknown and tainted unreachable."""
    node_monitor_period: float = 5.0
    """Seconds between two looks at every node."""
    root_ca_file: str | None = None
    """With --root-ca-file: the CA bundle published as kube-root-ca.crt in every namespace
    (without it, the CA the kubeconfig trusts)."""
    cluster_signing_cert_file: str | None = None
    cluster_signing_key_file: str | None = None
    """With both: the CA csrsigning signs kubernetes.io signers' approved requests with."""
    cluster_signing_duration: float = 8760 * 3600.0
    """Seconds a certificate csrsigning issues lasts at most (a request's expirationSeconds may ask for less)."""
    tracing: TracingConfig = TracingConfig()
    terminated_pod_gc_threshold: int = 12500
    """Terminated pods kept before the oldest are deleted (0: never delete them)."""
    pod_gc_period: float = 20.0
    """Seconds between two rounds of pod garbage collection."""
    pod_gc_orphan_quarantine: float = 40.0
    """Seconds a pod's node must be missing before the pod is deleted as orphaned."""
    default_storage_class: str = ""
    """With --default-storage-class NAME: the persistentvolume-binder creates, unless it exists, the
    default StorageClass NAME served by the local-path provisioner (WaitForFirstConsumer, Delete)."""
    leader_election: LeaderElection | None = None
    """With --leader-elect: act only while holding the Lease kube-system/kube-controller-manager."""
