"""Mountable secrets: an account annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits
the secrets its pods may use to the ones it lists.

Mirrors limitSecretReferences and limitEphemeralContainerSecretReferences in
plugin/pkg/admission/serviceaccount: secret volumes, `env[].valueFrom.secretKeyRef` and
`envFrom[].secretRef` of init and app containers (and of ephemeral containers when they are
added) must name one of the account's `secrets`, and `imagePullSecrets` one of its
`imagePullSecrets`. The first offending reference is reported with upstream's words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ENFORCE_MOUNTABLE_SECRETS_ANNOTATION", "enforces_mountable_secrets", "ephemeral_secret_error",
           "secret_reference_error"]

ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = "kubernetes.io/enforce-mountable-secrets"
Obj = dict[str, Any]


def enforces_mountable_secrets(account: Obj) -> bool:
    """True when the account's annotation parses as Go's strconv.ParseBool true."""
    value = ((account.get("metadata") or {}).get("annotations") or {}).get(ENFORCE_MOUNTABLE_SECRETS_ANNOTATION)
    return value in ("1", "t", "T", "true", "TRUE", "True")


def _names(refs: Any) -> set[str]:
    return {str(r.get("name")) for r in refs or [] if isinstance(r, dict) and r.get("name")}


def _container_error(kind: str, container: Obj, allowed: set[str], account: str) -> str | None:
    name = container.get("name")
    for env in container.get("env") or []:
        ref = ((env or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
        if ref.get("name") and ref["name"] not in allowed:
            return (f'{kind} {name} with envVar {env.get("name")} referencing secret.secretName="{ref["name"]}" is not '
                    f"allowed because service account {account} does not reference that secret")
    for env_from in container.get("envFrom") or []:
        ref = (env_from or {}).get("secretRef") or {}
        if ref.get("name") and ref["name"] not in allowed:
            return (f'{kind} {name} with envFrom referencing secret.secretName="{ref["name"]}" is not allowed '
                    f"because service account {account} does not reference that secret")
    return None


def secret_reference_error(account: Obj, spec: Obj) -> str | None:
    """Why this pod spec uses a secret its account does not list, or None."""
    account_name = (account.get("metadata") or {}).get("name")
    allowed = _names(account.get("secrets"))
    for volume in spec.get("volumes") or []:
        secret = (volume or {}).get("secret")
        if isinstance(secret, dict) and secret.get("secretName") not in allowed:
            return (f'volume with secret.secretName="{secret.get("secretName")}" is not allowed because service '
                    f"account {account_name} does not reference that secret")
    for field, kind in (("initContainers", "init container"), ("containers", "container")):
        for container in spec.get(field) or []:
            error = _container_error(kind, container or {}, allowed, str(account_name))
            if error:
                return error
    pulls = _names(account.get("imagePullSecrets"))
    for i, ref in enumerate(spec.get("imagePullSecrets") or []):
        if (ref or {}).get("name") not in pulls:
            return (f'imagePullSecrets[{i}].name="{(ref or {}).get("name")}" is not allowed because service account '
                    f"{account_name} does not reference that imagePullSecret")
    return None


def ephemeral_secret_error(account: Obj, spec: Obj) -> str | None:
    """Why an ephemeral container uses a secret its pod's account does not list, or None."""
    allowed = _names(account.get("secrets"))
    for container in spec.get("ephemeralContainers") or []:
        error = _container_error("ephemeral container", container or {}, allowed,
                                 str((account.get("metadata") or {}).get("name")))
        if error:
            return error
    return None
