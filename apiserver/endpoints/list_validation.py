"""Which list and watch option combinations are refused, in kube-apiserver's words.

Mirrors apimachinery's meta/internalversion/validation.ValidateListOptions (with the
WatchList feature on, as it is by default since 1.32): every violation found is reported at
once as one 422 Invalid about `ListOptions.meta.k8s.io ""`, a cause per violation.
"""

from __future__ import annotations

from apiserver.registry.generic import ListOptions
from kube.errors import FieldError, Invalid

__all__ = ["validate_list_options"]

_EXACT, _NOT_OLDER_THAN = "Exact", "NotOlderThan"


def _forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, f"Forbidden: {detail}", reason="FieldValueForbidden")


def _not_supported(field: str, value: str, supported: tuple[str, ...]) -> FieldError:
    allowed = ", ".join(f'"{s}"' for s in supported)
    return FieldError(field, f'Unsupported value: "{value}": supported values: {allowed}',
                      reason="FieldValueNotSupported")


def _list_errors(opts: ListOptions) -> list[FieldError]:
    errs: list[FieldError] = []
    match = opts.resource_version_match
    if match:
        if not opts.resource_version:
            errs.append(_forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if opts.continue_token:
            errs.append(_forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (_EXACT, _NOT_OLDER_THAN):
            errs.append(_not_supported("resourceVersionMatch", match, (_EXACT, _NOT_OLDER_THAN, "")))
        if match == _EXACT and opts.resource_version == "0":
            errs.append(_forbidden("resourceVersionMatch",
                                   'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if opts.send_initial_events is not None:
        errs.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return errs


def _watch_errors(opts: ListOptions) -> list[FieldError]:
    errs: list[FieldError] = []
    match = opts.resource_version_match
    if opts.send_initial_events is not None and match != _NOT_OLDER_THAN:
        errs.append(_forbidden("resourceVersionMatch",
                               f"sendInitialEvents requires setting resourceVersionMatch to {_NOT_OLDER_THAN}"))
    if match:
        if opts.send_initial_events is None:
            errs.append(_forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != _NOT_OLDER_THAN:
            errs.append(_not_supported("resourceVersionMatch", match, (_NOT_OLDER_THAN,)))
        if opts.continue_token:
            errs.append(_forbidden("resourceVersionMatch",
                                   "resourceVersionMatch is forbidden when continue is provided"))
    return errs


def validate_list_options(opts: ListOptions, *, watch: bool) -> None:
    """Raise 422 Invalid listing every refused combination in `opts` for a list (or a watch)."""
    errs = _watch_errors(opts) if watch else _list_errors(opts)
    if not errs:
        return
    summary = ", ".join(str(e) for e in errs)
    raise Invalid(f'ListOptions.meta.k8s.io "" is invalid: {summary if len(errs) == 1 else f"[{summary}]"}',
                  details={"group": "meta.k8s.io", "kind": "ListOptions", "causes": [e.cause() for e in errs]})
