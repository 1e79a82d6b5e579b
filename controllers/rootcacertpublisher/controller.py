"""The root-ca-cert-publisher: every namespace holds the ConfigMap `kube-root-ca.crt`
whose `ca.crt` is the cluster's CA bundle, so pods can verify the API server.

Mirrors pkg/controller/certificates/rootcacertpublisher's Publisher:
- a namespace added, or updated while Active, queues it; a `kube-root-ca.crt` ConfigMap
  updated or deleted queues its namespace;
- the reconcile creates the ConfigMap when it is missing; when `ca.crt` differs, other keys
  were added, or the description annotation is gone, it restores data and annotation with
  an update carrying the resourceVersion it read (other labels and annotations are kept);
- a create refused because the namespace is gone or terminating is not retried.
Guarantee: within a resync of any change, each live namespace's copy equals the CA bundle.
"""

from __future__ import annotations

import logging
from pathlib import Path

from controllers.context import ControllerContext
from kube.api import ConfigMap, Namespace
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import Forbidden, NotFound
from kube.workqueue import WorkQueue

__all__ = ["ROOT_CA_CONFIGMAP", "DESCRIPTION_ANNOTATION", "DESCRIPTION", "RootCACertPublisher", "root_ca_bundle"]

logger = logging.getLogger(__name__)

ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


def root_ca_bundle(ctx: ControllerContext) -> str:
    """--root-ca-file's contents, else the CA the controller-manager's kubeconfig trusts (as upstream).

    Raises OSError when the file cannot be read, and ValueError when there is no CA at all.
    """
    if ctx.config.root_ca_file:
        return Path(ctx.config.root_ca_file).read_text()
    if ctx.client.config.ca_data:
        return ctx.client.config.ca_data.decode()
    raise ValueError("root-ca-cert-publisher needs --root-ca-file or a kubeconfig with a CA")


class RootCACertPublisher:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client, self.root_ca = ctx.client, root_ca_bundle(ctx)
        self.namespaces = ctx.informers.informer_for(Namespace)
        self.configmaps = ctx.informers.informer_for(ConfigMap)
        self.queue: WorkQueue[str] = WorkQueue(name="root-ca-cert-publisher", clock=ctx.clock)
        self.namespaces.add_event_handler(EventHandler(
            on_add=lambda ns: self.queue.add(str(ns.metadata.name)),
            on_update=lambda _old, ns: self._namespace_updated(ns)))
        self.configmaps.add_event_handler(EventHandler(
            on_update=lambda _old, cm: self._configmap_changed(cm),
            on_delete=self._configmap_changed))

    def _namespace_updated(self, ns: Namespace) -> None:
        if ns.status is None or ns.status.phase in (None, "Active"):
            self.queue.add(str(ns.metadata.name))

    def _configmap_changed(self, cm: ConfigMap) -> None:
        if cm.metadata.name == ROOT_CA_CONFIGMAP and cm.metadata.namespace:
            self.queue.add(cm.metadata.namespace)

    async def run(self) -> None:
        try:
            await run_workers("root-ca-cert-publisher", self.queue, self.reconcile, workers=1)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        namespace = request.name
        if self.namespaces.store.get(namespace) is None:
            return None
        data = {"ca.crt": self.root_ca}
        cm = self.configmaps.store.get(f"{namespace}/{ROOT_CA_CONFIGMAP}")
        if cm is None:
            await self._create(namespace, data)
            return None
        annotations = cm.metadata.annotations or {}
        if cm.data == data and annotations.get(DESCRIPTION_ANNOTATION):
            return None
        updated = cm.model_copy(deep=True)
        updated.data = data
        updated.metadata.annotations = {**annotations, DESCRIPTION_ANNOTATION: DESCRIPTION}
        try:
            await self.client.update(updated)
        except NotFound:
            return None  # deleted meanwhile: the delete event queues a create
        logger.info("Restored root CA ConfigMap", extra={"namespace": namespace})
        return None

    async def _create(self, namespace: str, data: dict[str, str]) -> None:
        body = ConfigMap.model_validate({
            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": namespace,
                         "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
            "data": data})
        try:
            await self.client.create(body)
        except (NotFound, Forbidden):
            return  # the namespace is gone or terminating
        logger.info("Published root CA ConfigMap", extra={"namespace": namespace})
