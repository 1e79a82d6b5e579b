"""Bootstrap token authentication (`--enable-bootstrap-token-auth`): `Bearer <id>.<secret>`
is `system:bootstrap:<id>` in `system:bootstrappers`, when the Secret behind it says so.

Mirrors plugin/pkg/auth/authenticator/token/bootstrap: the token names its Secret
(`kube-system/bootstrap-token-<id>`, read from the API server's own cache); the request is
accepted only when that Secret exists, is not being deleted, has the bootstrap token type,
the same id and secret (compared in constant time), has not expired and allows
`usage-bootstrap-authentication`. The groups are `system:bootstrappers` plus each valid
`auth-extra-groups` entry. Anything else is no opinion here, so the request ends in a 401
when no other authenticator accepts it. Never logs the token.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from apiserver.authn.authenticator import UserInfo
from kube.bootstraptoken import (
    BOOTSTRAP_GROUP,
    BOOTSTRAP_USER_PREFIX,
    SECRET_TYPE,
    decode_secret_data,
    is_expired,
    parse_token,
    secret_name,
)

__all__ = ["BootstrapTokenAuthenticator"]

logger = logging.getLogger(__name__)

SecretLookup = Callable[[str, str], "dict[str, Any] | None"]


class BootstrapTokenAuthenticator:
    def __init__(self, secret_lookup: SecretLookup, *, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.secret_lookup, self.now = secret_lookup, now

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        parsed = parse_token(token) if scheme.lower() == "bearer" else None
        if parsed is None:
            return None
        token_id, token_secret = parsed
        secret = self.secret_lookup("kube-system", secret_name(token_id))
        if secret is None or (secret.get("metadata") or {}).get("deletionTimestamp") \
                or secret.get("type") != SECRET_TYPE:
            return None
        data = decode_secret_data(secret)
        if not hmac.compare_digest(data.get("token-secret", ""), token_secret) or data.get("token-id") != token_id:
            return None
        if is_expired(data, self.now()):
            logger.debug("Refused an expired bootstrap token", extra={"token_id": token_id})
            return None
        if data.get("usage-bootstrap-authentication") != "true":
            return None
        extra = [g.strip() for g in data.get("auth-extra-groups", "").split(",")
                 if g.strip().startswith(BOOTSTRAP_GROUP + ":")]
        return UserInfo(name=BOOTSTRAP_USER_PREFIX + token_id,
                        groups=(BOOTSTRAP_GROUP, *dict.fromkeys(extra), "system:authenticated"))
