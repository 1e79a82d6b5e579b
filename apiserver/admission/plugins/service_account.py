"""ServiceAccount: every pod runs as an existing service account, with its API credentials mounted.

Mirrors plugin/pkg/admission/serviceaccount. On a pod create:
- a pod that names no service account runs as `default` (`serviceAccount`, the deprecated
  alias, follows `serviceAccountName`);
- the account must exist, else 403 `error looking up service account NS/NAME: serviceaccount
  "NAME" not found`. The watch cache is asked first, then the store; for `default`, which the
  serviceaccount controller creates just after its namespace, the store is asked up to ten
  times 100-200 ms apart, as upstream, so a pod created right after its namespace succeeds;
- unless `automountServiceAccountToken` is false on the pod (which wins) or else on the
  account, the API credentials are mounted: one projected volume `kube-api-access-<5 random
  chars>` (upstream's TokenVolumeSource: the bound token at `token`, expiring after 3607 s,
  the cluster CA from the `kube-root-ca.crt` ConfigMap at `ca.crt`, and the pod's namespace
  at `namespace`), mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount in every
  init and app container that has no mount at that path yet. Ephemeral containers get none
  (they are added later, through their own subresource, as upstream). A pod that already has
  a `kube-api-access-*` volume keeps it and gets no second one; no volume is added when no
  container would mount it;
- a pod with no imagePullSecrets gets its account's;
- an account annotated `kubernetes.io/enforce-mountable-secrets: "true"` holds its pods,
  and the ephemeral containers later added to them, to the secrets it lists
  (_mountable_secrets.py).
Mirror pods (annotation kubernetes.io/config.mirror) are left as they are, and refused if
they name a service account, a secret or a token projection. Creating the same pod twice
gives two different volume names; everything else is idempotent.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from apiserver.admission.interfaces import Attributes, Obj, Operation
from apiserver.admission.plugins._mountable_secrets import (
    enforces_mountable_secrets,
    ephemeral_secret_error,
    secret_reference_error,
)
from apiserver.admission.plugins._pods import PodCreateMutation, forbidden
from apiserver.registry.lister import ObjectLister
from kube.errors import ApiError

__all__ = ["API_TOKEN_MOUNT_PATH", "ServiceAccount", "token_volume_source"]

DEFAULT_SERVICE_ACCOUNT = "default"
VOLUME_PREFIX = "kube-api-access-"
API_TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7  # upstream's WarnOnlyBoundTokenExpirationSeconds
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_DEFAULT_ATTEMPTS = 10

GetServiceAccount = Callable[[str, str], Awaitable[Obj]]
"""Reads a service account from storage; raises NotFound (an ApiError with code 404) when absent."""


def token_volume_source() -> Obj:
    """The projected source of the `kube-api-access-*` volume (upstream's TokenVolumeSource)."""
    return {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_EXPIRATION_SECONDS}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}


class ServiceAccount(PodCreateMutation):
    """The plugin; `lister` is the serviceaccounts watch cache, `get` a read through storage."""

    name = "ServiceAccount"

    def __init__(self, lister: ObjectLister | None = None, get: GetServiceAccount | None = None, *,
                 retry_interval: Callable[[], float] = lambda: random.uniform(0.1, 0.2),
                 generate_suffix: Callable[[], str] | None = None) -> None:
        self.lister, self.get = lister, get
        self.retry_interval = retry_interval
        self.generate_suffix = generate_suffix or (lambda: "".join(random.choices(_NAME_ALPHABET, k=5)))

    def handles(self, operation: Operation) -> bool:
        return operation in (Operation.CREATE, Operation.UPDATE)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation is Operation.CREATE:
            await super().admit(attrs)
        elif attrs.targets("", "pods", "ephemeralcontainers") and isinstance(attrs.object, dict):
            await self._admit_ephemeral_containers(attrs, attrs.object)

    async def _admit_ephemeral_containers(self, attrs: Attributes, pod: Obj) -> None:
        """Ephemeral containers being added may use only the secrets the pod's account allows."""
        spec, name = pod.get("spec") or {}, _pod_name(attrs, pod)
        account_name = spec.get("serviceAccountName")
        if self.get is None:
            return
        if not account_name:
            raise forbidden(name, f"no service account specified for pod {attrs.namespace}/{name}")
        account = await self._lookup(attrs.namespace, name, str(account_name))
        error = ephemeral_secret_error(account, spec) if enforces_mountable_secrets(account) else None
        if error:
            raise forbidden(name, error)

    async def _lookup(self, namespace: str, pod_name: str, account_name: str) -> Obj:
        account = await self._service_account(namespace, account_name)
        if account is None:
            raise forbidden(pod_name, f"error looking up service account {namespace}/{account_name}: "
                                      f'serviceaccount "{account_name}" not found')
        return account

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        pod = attrs.object or {}
        name = _pod_name(attrs, pod)
        if MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            _check_mirror_pod(name, spec)
            return
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccount"] = spec["serviceAccountName"]
        if self.get is None:
            return  # defaulting only: no store to check the account against
        account = await self._lookup(attrs.namespace, name, str(spec["serviceAccountName"]))
        if _should_automount(account, spec):
            self._mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name")} for s in account["imagePullSecrets"]
                                        if isinstance(s, dict)]
        error = secret_reference_error(account, spec) if enforces_mountable_secrets(account) else None
        if error:
            raise forbidden(name, error)

    async def _service_account(self, namespace: str, name: str) -> Obj | None:
        """The account from the cache, else from storage (retried briefly for `default`), else None."""
        cached = self.lister.get(namespace, name) if self.lister is not None else None
        if cached is not None or self.get is None:
            return cached
        attempts = _DEFAULT_ATTEMPTS if name == DEFAULT_SERVICE_ACCOUNT else 1
        interval = self.retry_interval()
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(interval)
            try:
                return await self.get(namespace, name)
            except ApiError as e:
                if e.code != 404:
                    raise
        return None

    def _mount_token(self, spec: Obj) -> None:
        volumes: list[Any] = spec["volumes"] if isinstance(spec.get("volumes"), list) else []
        existing = next((v["name"] for v in volumes if isinstance(v, dict)
                         and str(v.get("name") or "").startswith(VOLUME_PREFIX)), None)
        volume_name = existing or VOLUME_PREFIX + self.generate_suffix()
        mounted = False
        for container in _containers(spec):
            mounts = container.get("volumeMounts")
            if not isinstance(mounts, list):
                mounts = container["volumeMounts"] = []
            if any(isinstance(m, dict) and m.get("mountPath") == API_TOKEN_MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": volume_name, "readOnly": True, "mountPath": API_TOKEN_MOUNT_PATH})
            mounted = True
        if mounted and existing is None:
            spec["volumes"] = [*volumes, {"name": volume_name, "projected": token_volume_source()}]


def _containers(spec: Obj) -> Iterator[Obj]:
    for field in ("initContainers", "containers"):
        items = spec.get(field)
        if isinstance(items, list):
            yield from (c for c in items if isinstance(c, dict))


def _should_automount(account: Obj, spec: Obj) -> bool:
    """The pod's automountServiceAccountToken wins, then the account's; unset means yes."""
    for source in (spec, account):
        value = source.get("automountServiceAccountToken")
        if isinstance(value, bool):
            return value
    return True


def _pod_name(attrs: Attributes, pod: Obj) -> str:
    """The name admission errors give: the pod's, else its generateName (not generated yet)."""
    meta = pod.get("metadata") or {}
    return str(attrs.name or meta.get("name") or meta.get("generateName") or "Unknown")


def _check_mirror_pod(name: str, spec: Obj) -> None:
    """A mirror pod may reference no service account, secret or token projection."""
    if spec.get("serviceAccountName"):
        raise forbidden(name, "a mirror pod may not reference service accounts")
    if any(_secret_names(spec)):
        raise forbidden(name, "a mirror pod may not reference secrets")
    for volume in spec.get("volumes") or []:
        for source in ((volume or {}).get("projected") or {}).get("sources") or []:
            if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                raise forbidden(name, "a mirror pod may not use ServiceAccountToken volume projections")


def _secret_names(spec: Obj) -> Iterator[Any]:
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            yield (volume.get("secret") or {}).get("secretName")
            for source in (volume.get("projected") or {}).get("sources") or []:
                yield ((source or {}).get("secret") or {}).get("name")
    for container in [*_containers(spec), *(c for c in spec.get("ephemeralContainers") or [] if isinstance(c, dict))]:
        for env in container.get("env") or []:
            yield (((env or {}).get("valueFrom") or {}).get("secretKeyRef") or {}).get("name")
        for env_from in container.get("envFrom") or []:
            yield ((env_from or {}).get("secretRef") or {}).get("name")
    for ref in spec.get("imagePullSecrets") or []:
        yield (ref or {}).get("name")
