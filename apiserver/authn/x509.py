"""x509 client-certificate authentication: CN is the user, each O is a group.

The TLS layer does the verification: with `--client-ca-file` the server asks every client
for a certificate (optional, so bearer-token clients still connect) and aborts the
handshake for one the CA did not sign. What reaches here is therefore already trusted; the
`PeerCertificateProtocol` puts its DER bytes in the ASGI scope
(`scope["extensions"]["tls"]["client_cert"]`), and `user_from_certificate` reads the name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from apiserver.authn.authenticator import UserInfo
from kube.httpstream import UpgradeProtocol

__all__ = ["PeerCertificateProtocol", "client_certificate", "user_from_certificate"]


def user_from_certificate(der: bytes) -> UserInfo | None:
    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError:
        return None
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or not str(names[0].value):
        return None
    groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(name=str(names[0].value), groups=(*groups, "system:authenticated"))


def client_certificate(scope: Mapping[str, Any]) -> bytes | None:
    cert = ((scope.get("extensions") or {}).get("tls") or {}).get("client_cert")
    return cert if isinstance(cert, bytes) else None


class PeerCertificateProtocol(UpgradeProtocol):
    """The API server's HTTP protocol: upgrades reach the app (`kube.httpstream`), and each scope carries
    the connection's verified client certificate."""

    app: Any  # the ASGI app uvicorn's protocol calls; uvicorn declares its base only as asyncio.Protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override, unused-ignore]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if not der:
            return
        inner = self.app

        async def with_certificate(scope: Any, receive: Any, send: Any) -> None:
            scope.setdefault("extensions", {})["tls"] = {"client_cert": der}
            await inner(scope, receive, send)

        self.app = with_certificate
