"""The CertificateSigningRequest store: a new request records who asked for it.

Mirrors the identity part of upstream's csrStrategy.PrepareForCreate: `spec.username`,
`spec.uid`, `spec.groups` and `spec.extra` are the requesting user's, whatever the client
sent, so an approver can trust them (the csrapproving controller approves a node's request
because its requester is a bootstrapper or that node). A create made without a request
(the server's own) keeps what it was given.
"""

from __future__ import annotations

from apiserver.admission.chain import RequestAdmission
from apiserver.registry.generic import RegistryStore
from apiserver.registry.strategy import Obj

__all__ = ["CertificateSigningRequestStore"]


class CertificateSigningRequestStore(RegistryStore):
    async def create(self, namespace: str | None, obj: Obj, *, dry_run: bool = False,
                     manager: str | None = None, admission: RequestAdmission | None = None) -> Obj:
        if admission is not None:
            spec = obj.get("spec")
            if isinstance(spec, dict):
                user = admission.user
                for key in ("username", "uid", "groups", "extra"):
                    spec.pop(key, None)
                spec["username"] = user.name
                if user.uid:
                    spec["uid"] = user.uid
                if user.groups:
                    spec["groups"] = list(user.groups)
                if user.extra:
                    spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        return await super().create(namespace, obj, dry_run=dry_run, manager=manager, admission=admission)
