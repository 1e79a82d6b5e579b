"""Validation of a CertificateSigningRequest, with upstream's messages.

Mirrors k8s.io/kubernetes/pkg/apis/certificates/validation for certificates.k8s.io/v1:
- `spec.request` is one PEM block of type CERTIFICATE REQUEST that parses as PKCS#10;
- `spec.signerName` is required and has the form `example.com/signer-name`;
- `spec.usages` is required, each a known key usage, none twice;
- `spec.expirationSeconds`, when set, is at least 600;
- conditions have a type, the built-in types (`Approved`, `Denied`, `Failed`) only with
  status True, no type twice, never both Approved and Denied;
- `status.certificate` holds only PEM CERTIFICATE blocks that parse, is set only on an
  approved request, and once set never changes; an Approved or Denied condition, once
  there, is never removed.
The name may be any path segment ("We don't care what you call your certificate requests").
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cryptography import x509

from apiserver.validation.field import duplicate, forbidden, invalid, not_supported, required
from kube.errors import FieldError

__all__ = ["KEY_USAGES", "decode_bytes", "validate_csr", "validate_csr_update"]

Obj = dict[str, Any]

KEY_USAGES = ("signing", "digital signature", "content commitment", "key encipherment", "key agreement",
              "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
              "server auth", "client auth", "code signing", "email protection", "s/mime", "ipsec end system",
              "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc")
_BUILTIN_CONDITIONS = ("Approved", "Denied", "Failed")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)


def decode_bytes(value: Any) -> bytes | None:
    """A `[]byte` field's bytes (base64 on the wire), or None when it is not valid base64."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _pem_blocks(data: bytes) -> list[tuple[str, bytes]]:
    out = []
    for m in _PEM_BLOCK.finditer(data):
        try:
            out.append((m.group(1).decode(), base64.b64decode(b"".join(m.group(2).split()))))
        except (binascii.Error, ValueError):
            continue
    return out


def _request_error(data: bytes) -> str | None:
    blocks = _pem_blocks(data)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        x509.load_der_x509_csr(blocks[0][1])
    except ValueError as e:
        return f"x509: {e}"
    return None


def _signer_name_errors(path: str, name: str) -> list[FieldError]:
    domain, slash, rest = name.partition("/")
    if not slash or not rest:
        return [invalid(path, name, "must be a fully qualified domain and path of the form "
                                     "'example.com/signer-name'")]
    labels = domain.split(".")
    if len(domain) > 253 or len(labels) < 2 or not all(_DNS_LABEL.match(label) for label in labels):
        return [invalid(path, name, "should be a domain with at least two segments separated by dots")]
    if len(rest) > 63 + 253 or any(not part for part in rest.split("/")):
        return [invalid(path, name, "validating path: path segments must not be empty")]
    return []


def _short_bytes(data: bytes) -> str:
    """Go's %#v of a []byte, cut short: the request is long and says nothing in a message."""
    head = ", ".join(f"0x{b:x}" for b in data[:8])
    return f"[]byte{{{head}{', ...' if len(data) > 8 else ''}}}"


def _spec_errors(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    raw = spec.get("request")
    data = decode_bytes(raw) if raw else None
    if not raw:
        errs.append(required("spec.request"))
    elif data is None:
        errs.append(invalid("spec.request", raw, "illegal base64 data"))
    else:
        problem = _request_error(data)
        if problem:
            errs.append(FieldError("spec.request", f"Invalid value: {_short_bytes(data)}: {problem}"))
    usages = spec.get("usages") or []
    if not usages:
        errs.append(required("spec.usages", "usages must be provided"))
    seen: set[str] = set()
    for i, usage in enumerate(usages):
        if usage not in KEY_USAGES:
            errs.append(not_supported(f"spec.usages[{i}]", usage, KEY_USAGES))
        elif usage in seen:
            errs.append(duplicate(f"spec.usages[{i}]", usage))
        seen.add(str(usage))
    signer = spec.get("signerName")
    if not signer:
        errs.append(required("spec.signerName"))
    else:
        errs += _signer_name_errors("spec.signerName", str(signer))
    seconds = spec.get("expirationSeconds")
    if seconds is not None and (not isinstance(seconds, int) or seconds < 600):
        errs.append(invalid("spec.expirationSeconds", seconds,
                            "may not specify a duration less than 600 seconds (10 minutes)"))
    return errs


def _conditions(obj: Obj) -> list[Obj]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return [c for c in conditions if isinstance(c, dict)]


def _status_errors(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    types: set[str] = set()
    for i, cond in enumerate(_conditions(obj)):
        path, ctype, cstatus = f"status.conditions[{i}]", cond.get("type"), cond.get("status")
        if not ctype:
            errs.append(required(f"{path}.type"))
        if ctype in _BUILTIN_CONDITIONS and cstatus != "True":
            errs.append(not_supported(f"{path}.status", cstatus, ["True"]))
        elif cstatus not in ("True", "False", "Unknown"):
            errs.append(not_supported(f"{path}.status", cstatus, ["False", "True", "Unknown"]))
        if ctype in types:
            errs.append(duplicate(f"{path}.type", ctype))
        types.add(str(ctype))
    if "Approved" in types and "Denied" in types:
        errs.append(invalid("status.conditions", "Approved", "Approved and Denied conditions are mutually exclusive"))
    cert = (obj.get("status") or {}).get("certificate")
    if cert:
        data = decode_bytes(cert)
        blocks = _pem_blocks(data) if data is not None else []
        if not blocks or any(kind != "CERTIFICATE" for kind, _ in blocks):
            errs.append(invalid("status.certificate", "<certificate data>", "must contain at least one CERTIFICATE "
                                "PEM block and no other PEM blocks"))
        else:
            for _, der in blocks:
                try:
                    x509.load_der_x509_certificate(der)
                except ValueError as e:
                    errs.append(invalid("status.certificate", "<certificate data>", f"x509: {e}"))
                    break
        if "Approved" not in types:
            errs.append(forbidden("status.certificate", "certificate can only be set if the Approved condition "
                                                        "is present"))
    return errs


def validate_csr(obj: Obj) -> list[FieldError]:
    """Every error in a request's spec and status."""
    spec = obj.get("spec")
    return _spec_errors(spec if isinstance(spec, dict) else {}) + _status_errors(obj)


def validate_csr_update(new: Obj, old: Obj) -> list[FieldError]:
    """Every error in an update: the object's own, a changed certificate, a removed decision."""
    errs = validate_csr(new)
    old_cert = (old.get("status") or {}).get("certificate")
    if old_cert and (new.get("status") or {}).get("certificate") != old_cert:
        errs.append(invalid("status.certificate", "<certificate data>",
                            "updates may not modify existing certificate content"))
    new_types = {c.get("type") for c in _conditions(new)}
    for ctype in ("Approved", "Denied"):
        if any(c.get("type") == ctype for c in _conditions(old)) and ctype not in new_types:
            errs.append(forbidden("status.conditions", f'updates may not remove a condition of type "{ctype}"'))
    return errs
