"""The csrapproving controller: approves kubelets' client certificate requests that the
requester is allowed to have approved.

Mirrors pkg/controller/certificates/approver (the `csrapproving` controller): every
CertificateSigningRequest added or updated is queued; the reconcile skips one already
approved or denied, asks `recognize` which permissions would approve it, and for each asks
the API server (a SubjectAccessReview for the requester's user, groups, uid and extra)
whether the requester may `create` `certificatesigningrequests/<permission>`. The first
allowed one approves: an `Approved` condition (reason `AutoApproved`) written through the
`approval` subresource. A recognised request that no permission approves is left pending
for a person (`kubectl certificate approve`), and logged.
"""

from __future__ import annotations

import logging

from controllers.common.csr import has_condition
from controllers.context import ControllerContext
from controllers.csrapproving.approver import Recognition, recognize
from kube.api import APPROVED, DENIED, CertificateSigningRequest, CertificateSigningRequestCondition
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.resources import resource_for_kind
from kube.workqueue import WorkQueue

__all__ = ["CSRApprovingController"]

logger = logging.getLogger(__name__)

_SAR = resource_for_kind("authorization.k8s.io/v1", "SubjectAccessReview")


class CSRApprovingController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.csrs = ctx.informers.informer_for(CertificateSigningRequest)
        self.queue: WorkQueue[str] = WorkQueue(name="csrapproving", clock=ctx.clock)
        self.csrs.add_event_handler(EventHandler(
            on_add=lambda csr: self.queue.add(str(csr.metadata.name)),
            on_update=lambda _old, csr: self.queue.add(str(csr.metadata.name))))

    async def run(self) -> None:
        try:
            await run_workers("csrapproving", self.queue, self.reconcile, workers=2)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        csr = self.csrs.store.get(request.name)
        if csr is None or has_condition(csr, APPROVED, DENIED) or csr.status.certificate:
            return None
        recognitions = recognize(csr)
        for recognition in recognitions:
            if await self._allowed(csr, recognition):
                await self._approve(csr, recognition)
                return None
        if recognitions:
            logger.info("Recognised a kubelet client request, but its requester may not have it approved",
                        extra={"csr": request.name, "requester": csr.spec.username})
        return None

    async def _allowed(self, csr: CertificateSigningRequest, recognition: Recognition) -> bool:
        assert _SAR is not None
        spec = csr.spec
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
            "user": spec.username or "", "uid": spec.uid or "", "groups": spec.groups or [],
            "extra": spec.extra or {},
            "resourceAttributes": {"group": "certificates.k8s.io", "resource": "certificatesigningrequests",
                                   "subresource": recognition.subresource, "verb": "create"}}}
        answer = await self.client.create_raw(_SAR, review)
        return bool((answer.get("status") or {}).get("allowed"))

    async def _approve(self, csr: CertificateSigningRequest, recognition: Recognition) -> None:
        approved = csr.model_copy(deep=True)
        approved.status.conditions = [*(csr.status.conditions or []), CertificateSigningRequestCondition(
            type=APPROVED, status="True", reason="AutoApproved", message=recognition.message)]
        try:
            await self.client.replace_raw(CertificateSigningRequest.info, approved.to_dict(),
                                          name=str(csr.metadata.name), subresource="approval")
        except (Conflict, NotFound):
            return  # changed or gone meanwhile: its event queues it again
        logger.info("Approved certificate signing request", extra={"csr": csr.metadata.name,
                                                                  "requester": csr.spec.username})
