"""List paging and resourceVersion semantics shared by the registry and the watch cache.

Mirrors apiserver's storage/etcd3 list and its errors: continue tokens are opaque to
clients but carry the revision of the first page (every page reads that one snapshot) and
the key to start from; a requested resourceVersion newer than the store has is a 504 Timeout
("Too large resource version", retry after a second), an expired snapshot a 410.
"""

from __future__ import annotations

import base64
import json

from kube.errors import BadRequest, ResourceExpired, Timeout

__all__ = ["encode_continue", "decode_continue", "parse_resource_version", "too_large_resource_version",
           "list_too_old", "continue_too_old"]


_UINT64_MAX = (1 << 64) - 1


def encode_continue(revision: int, start_key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"rv": revision, "start": start_key}).encode()).decode()


def decode_continue(token: str, prefix: str) -> tuple[int, str]:
    """(revision, start key) of a continue token issued for `prefix`; 400 for anything else."""
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        revision, start_key = int(decoded["rv"]), str(decoded["start"])
    except (ValueError, KeyError, TypeError):
        raise BadRequest("invalid continue token") from None
    if not start_key.startswith(prefix):
        raise BadRequest("invalid continue token")
    return revision, start_key


def parse_resource_version(rv: str | None) -> int | None:
    """None for "" or absent (most recent), the revision otherwise ("0": any).

    400 for anything Go's strconv.ParseUint(rv, 10, 64) refuses: signs, spaces, other digits
    than ASCII ones, values past 2^64-1.
    """
    if rv in (None, ""):
        return None
    text = str(rv)
    if not (text.isascii() and text.isdigit()) or int(text) > _UINT64_MAX:
        raise BadRequest(f"invalid resource version: {rv}")
    return int(text)


def too_large_resource_version(requested: int, current: int) -> Timeout:
    return Timeout(f"Timeout: Too large resource version: {requested}, current: {current}",
                   details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                            "retryAfterSeconds": 1})


def list_too_old() -> ResourceExpired:
    return ResourceExpired("The resourceVersion for the provided list is too old.")


def continue_too_old() -> ResourceExpired:
    return ResourceExpired("The provided continue parameter is too old to display a consistent list result. "
                           "You can start a new list without the continue parameter.")
