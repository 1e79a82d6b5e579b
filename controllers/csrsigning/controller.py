"""The csrsigning controller: signs approved requests to the kubernetes.io signers with the cluster CA.

Mirrors pkg/controller/certificates/signer (the `csrsigning` controller, with
`--cluster-signing-cert-file`, `--cluster-signing-key-file` and
`--cluster-signing-duration`): a request is queued when added or updated; the reconcile
signs one that is approved, not failed, not yet issued and addressed to
`kubernetes.io/kube-apiserver-client-kubelet`, `kubernetes.io/kube-apiserver-client` or
`kubernetes.io/kubelet-serving`. A request its signer refuses (a kubelet client request
whose subject is not a node's, say) gets a `Failed` condition (reason
`SignerValidationFailure`) instead. The certificate goes into `status.certificate` through
`/status`. Without the CA files the controller does nothing, as upstream's.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
from pathlib import Path

from controllers.common.csr import has_condition, parse_request, signer_problem
from controllers.context import ControllerContext
from controllers.csrsigning.signer import CertificateAuthority, signing_duration
from kube.api import (
    APPROVED,
    FAILED,
    KUBE_APISERVER_CLIENT_SIGNER,
    KUBELET_CLIENT_SIGNER,
    KUBELET_SERVING_SIGNER,
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
)
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.workqueue import WorkQueue

__all__ = ["CSRSigningController"]

logger = logging.getLogger(__name__)

_SIGNERS = (KUBELET_CLIENT_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, KUBELET_SERVING_SIGNER)


class CSRSigningController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client, self.now = ctx.client, ctx.now
        config = ctx.config
        self.duration = dt.timedelta(seconds=config.cluster_signing_duration)
        self.authority: CertificateAuthority | None = None
        if config.cluster_signing_cert_file and config.cluster_signing_key_file:
            self.authority = CertificateAuthority.load(Path(config.cluster_signing_cert_file).read_bytes(),
                                                       Path(config.cluster_signing_key_file).read_bytes())
        self.csrs = ctx.informers.informer_for(CertificateSigningRequest)
        self.queue: WorkQueue[str] = WorkQueue(name="csrsigning", clock=ctx.clock)
        self.csrs.add_event_handler(EventHandler(
            on_add=lambda csr: self.queue.add(str(csr.metadata.name)),
            on_update=lambda _old, csr: self.queue.add(str(csr.metadata.name))))

    async def run(self) -> None:
        if self.authority is None:
            logger.info("No --cluster-signing-cert-file and --cluster-signing-key-file: not signing requests")
            return
        try:
            await run_workers("csrsigning", self.queue, self.reconcile, workers=2)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        csr = self.csrs.store.get(request.name)
        if csr is None or self.authority is None or csr.spec.signer_name not in _SIGNERS:
            return None
        if not has_condition(csr, APPROVED) or has_condition(csr, FAILED) or csr.status.certificate:
            return None
        req = parse_request(csr)
        usages = csr.spec.usages or []
        problem = "the request does not parse" if req is None else signer_problem(csr.spec.signer_name, req, usages)
        updated = csr.model_copy(deep=True)
        if problem is not None or req is None:
            updated.status.conditions = [*(csr.status.conditions or []), CertificateSigningRequestCondition(
                type=FAILED, status="True", reason="SignerValidationFailure", message=problem)]
        else:
            pem = self.authority.sign(req, usages=usages, now=self.now(),
                                      duration=signing_duration(self.duration, csr.spec.expiration_seconds))
            updated.status.certificate = base64.b64encode(pem).decode()
        try:
            await self.client.update_status(updated)
        except (Conflict, NotFound):
            return None  # changed or gone meanwhile: its event queues it again
        logger.info("Signed certificate signing request" if problem is None else "Refused to sign request",
                    extra={"csr": request.name, "signer": csr.spec.signer_name, "reason": problem or ""})
        return None
