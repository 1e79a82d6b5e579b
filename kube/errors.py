"""One error hierarchy shared by the API server and every client: ApiError <-> metav1.Status.

The server raises these and a single exception handler turns them into a `Status` body with
the matching HTTP code; the client turns a `Status` body back into the same class, so code on
both sides catches `NotFound`, `Conflict` and friends instead of inspecting numbers.

    ApiError (any code)
    ├── BadRequest 400          ├── AlreadyExists 409 (reason AlreadyExists)
    ├── Unauthorized 401        ├── Conflict 409 (reason Conflict)
    ├── Forbidden 403           ├── ResourceExpired 410 (reason Expired / Gone)
    ├── NotFound 404            ├── RequestEntityTooLarge 413
    ├── MethodNotAllowed 405    ├── UnsupportedMediaType 415
    ├── NotAcceptable 406       ├── Invalid 422
    ├── TooManyRequests 429     ├── InternalError 500
    ├── ServiceUnavailable 503  └── Timeout 504

`ApiError.status` is the Status exactly as kube-apiserver writes it: its fields in Go's
declaration order (kind, apiVersion, metadata, status, message, reason, details, code) and,
as Go's `omitempty` does, without the empty ones inside `details`; `details` itself is
written whenever the error carries any (an empty `{}` included), as upstream does.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "MethodNotAllowed",
    "NotAcceptable", "AlreadyExists", "Conflict", "ResourceExpired", "RequestEntityTooLarge",
    "UnsupportedMediaType", "Invalid", "TooManyRequests", "InternalError", "ServiceUnavailable", "Timeout",
    "FieldError", "status_details", "qualified_resource", "error_from_status",
]


class ApiError(Exception):
    """An API failure carrying the `metav1.Status` that describes it."""

    code: int = 500
    reason: str = "InternalError"

    def __init__(self, message: str, *, reason: str | None = None, code: int | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        if code is not None:
            self.code = code
        self.details = details

    @property
    def status(self) -> dict[str, Any]:
        """The wire `Status` object for this error, its keys in kube-apiserver's order."""
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        if self.message:
            body["message"] = self.message
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = status_details(self.details)
        body["code"] = self.code
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code} {self.reason}: {self.message})"


class BadRequest(ApiError):
    code, reason = 400, "BadRequest"


class Unauthorized(ApiError):
    code, reason = 401, "Unauthorized"


class Forbidden(ApiError):
    code, reason = 403, "Forbidden"


class NotFound(ApiError):
    code, reason = 404, "NotFound"


class MethodNotAllowed(ApiError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(ApiError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(ApiError):
    code, reason = 409, "AlreadyExists"


class Conflict(ApiError):
    code, reason = 409, "Conflict"


class ResourceExpired(ApiError):
    code, reason = 410, "Expired"


class RequestEntityTooLarge(ApiError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(ApiError):
    code, reason = 422, "Invalid"


class TooManyRequests(ApiError):
    code, reason = 429, "TooManyRequests"


class InternalError(ApiError):
    code, reason = 500, "InternalError"


class ServiceUnavailable(ApiError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(ApiError):
    """504: the server could not answer in time (a too large resourceVersion, for one)."""

    code, reason = 504, "Timeout"


_DETAIL_FIELDS = ("name", "group", "kind", "uid")
_CAUSE_FIELDS = ("reason", "message", "field")


def status_details(details: dict[str, Any]) -> dict[str, Any]:
    """`details` in metav1.StatusDetails' field order, without its empty fields (Go's omitempty)."""
    out: dict[str, Any] = {f: details[f] for f in _DETAIL_FIELDS if details.get(f)}
    causes = [{f: c[f] for f in _CAUSE_FIELDS if c.get(f)} for c in details.get("causes") or []
              if isinstance(c, dict)]
    if causes:
        out["causes"] = causes
    if details.get("retryAfterSeconds"):
        out["retryAfterSeconds"] = details["retryAfterSeconds"]
    return out


class FieldError:
    """One validation failure at a field path (`spec.replicas`), as in apimachinery's field.Error."""

    def __init__(self, field: str, message: str, *, reason: str = "FieldValueInvalid") -> None:
        self.field, self.message, self.reason = field, message, reason

    def cause(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def qualified_resource(plural: str, group: str) -> str:
    """`pods` for the core group, `deployments.apps` otherwise, as Kubernetes messages spell it."""
    return f"{plural}.{group}" if group else plural


_BY_REASON: dict[str, type[ApiError]] = {
    cls.reason: cls for cls in (
        BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, NotAcceptable, AlreadyExists,
        Conflict, RequestEntityTooLarge, UnsupportedMediaType, Invalid, TooManyRequests, InternalError,
        ServiceUnavailable, Timeout)
}
_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    406: NotAcceptable, 409: Conflict, 410: ResourceExpired, 413: RequestEntityTooLarge,
    415: UnsupportedMediaType, 422: Invalid, 429: TooManyRequests, 500: InternalError, 503: ServiceUnavailable,
    504: Timeout,
}


def error_from_status(status: dict[str, Any] | None, *, http_code: int, fallback_message: str = "") -> ApiError:
    """Rebuild the matching ApiError subclass from a `Status` body (or from a bare HTTP code)."""
    status = status if isinstance(status, dict) else {}
    code = int(status.get("code") or http_code)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or fallback_message or f"the server returned HTTP {code}")
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code) or ApiError
    if code == 410:
        cls = ResourceExpired
    return cls(message, reason=reason or None, code=code, details=status.get("details"))
