"""Run every controller in one process over one shared InformerFactory.

Mirrors kube-controller-manager's controller loop (cmd/kube-controller-manager/app):
1. build one read client for the informers and, per controller, a write client whose
   field manager is `<name>-controller` (all with User-Agent picokube-controller-manager);
2. build every controller in `CONTROLLERS`; each registers its informers and handlers;
3. start the informers, wait until every cache has synced, then run every controller in
   one TaskGroup. A controller that fails takes the process down (and is restarted by
   its supervisor) rather than leaving a half-working manager behind.
Adding a controller is a package plus one entry in `CONTROLLERS`.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack

from controllers.clusterroleaggregation import ClusterRoleAggregationController
from controllers.config import USER_AGENT, ControllerManagerConfig
from controllers.context import Controller, ControllerBuilder, ControllerContext
from controllers.cronjob import CronJobController
from controllers.csrapproving import CSRApprovingController
from controllers.csrsigning import CSRSigningController
from controllers.daemonset import DaemonSetsController
from controllers.deployment import DeploymentController
from controllers.disruption import DisruptionController
from controllers.endpoint import EndpointsController
from controllers.endpointslice import EndpointSliceController
from controllers.garbagecollector import GarbageCollector
from controllers.job import JobController
from controllers.namespace import NamespaceController
from controllers.nodelifecycle import NodeLifecycleController
from controllers.persistentvolume import PersistentVolumeController
from controllers.podgc import PodGCController
from controllers.replicaset import ReplicaSetController, ReplicationManager
from controllers.rootcacertpublisher import RootCACertPublisher
from controllers.serviceaccount import ServiceAccountsController
from controllers.statefulset import StatefulSetController
from controllers.tainteviction import TaintEvictionController
from controllers.tokencleaner import TokenCleaner
from controllers.ttlafterfinished import TTLAfterFinishedController
from controllers.volumeprotection import PVCProtectionController, PVProtectionController
from kube.cache import InformerFactory
from kube.client import RESTClient, load_kubeconfig
from kube.clock import RealClock
from kube.timeutil import utc_now

__all__ = ["CONTROLLERS", "run_controller_manager"]

logger = logging.getLogger(__name__)

CONTROLLERS: dict[str, ControllerBuilder] = {
    "replicaset": ReplicaSetController,
    "deployment": DeploymentController,
    "serviceaccount": ServiceAccountsController,
    "namespace": NamespaceController,
    "garbagecollector": GarbageCollector,
    "nodelifecycle": NodeLifecycleController,
    "clusterrole-aggregation": ClusterRoleAggregationController,
    "root-ca-cert-publisher": RootCACertPublisher,
    "endpoint": EndpointsController,
    "endpointslice": EndpointSliceController,
    "daemonset": DaemonSetsController,
    "replicationcontroller": ReplicationManager,
    "statefulset": StatefulSetController,
    "disruption": DisruptionController,
    "taint-eviction-controller": TaintEvictionController,
    "pod-garbage-collector": PodGCController,
    "job": JobController,
    "ttl-after-finished": TTLAfterFinishedController,
    "cronjob": CronJobController,
    "persistentvolume-binder": PersistentVolumeController,
    "pvc-protection": PVCProtectionController,
    "pv-protection": PVProtectionController,
    "csrapproving": CSRApprovingController,
    "csrsigning": CSRSigningController,
    "tokencleaner": TokenCleaner,
}
"""Controller name -> builder; the name also makes the field manager `<name>-controller`."""


async def run_controller_manager(config: ControllerManagerConfig) -> None:
    """Run until cancelled; raises if a controller or the informers fail for good."""
    client_config = load_kubeconfig(config.kubeconfig)
    clock = RealClock()
    async with AsyncExitStack() as stack:
        read_client = RESTClient(client_config, user_agent=USER_AGENT)
        stack.push_async_callback(read_client.close)
        informers = InformerFactory(read_client, clock=clock)
        controllers: dict[str, Controller] = {}
        for name, build in CONTROLLERS.items():
            client = RESTClient(client_config, user_agent=USER_AGENT, field_manager=f"{name}-controller")
            stack.push_async_callback(client.close)
            ctx = ControllerContext(config=config, client=client, informers=informers, clock=clock, now=utc_now)
            controllers[name] = build(ctx)
        logger.info("Starting controller-manager", extra={"server": client_config.server,
                                                          "controllers": ",".join(controllers)})
        async with asyncio.TaskGroup() as tg:
            tg.create_task(informers.run(), name="informers")
            await informers.wait_for_cache_sync()
            logger.info("Caches synced")
            for name, controller in controllers.items():
                tg.create_task(controller.run(), name=f"{name}-controller")
