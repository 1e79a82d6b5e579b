"""The exceptions of the storage layer.

Storage implementations translate every backend failure into one of these, so callers
(the registries, which map them to HTTP statuses) never see a backend client's exception
types:

    StorageError
    ├── KeyExists          create of an existing key             -> 409 AlreadyExists
    ├── KeyNotFound        read/update/delete of a missing key   -> 404 NotFound
    ├── RevisionConflict   compare-and-swap lost                 -> 409 Conflict
    ├── Compacted          revision no longer in history         -> 410 Gone / Expired
    ├── FutureRevision     revision not written yet              -> 504 / retry
    ├── Unavailable        backend unreachable or timed out      -> 503
    └── TransformFailed    a stored value does not decrypt       -> 500 InternalError

Invariant: every attribute named in a constructor is stored on the instance under the same
name, so handlers can build precise messages.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interface import KeyValue, ListResult

__all__ = ["StorageError", "KeyExists", "KeyNotFound", "RevisionConflict", "Compacted",
           "FutureRevision", "Unavailable", "TransformFailed"]

logger = logging.getLogger(__name__)


class StorageError(Exception):
    """Base class of every storage failure."""


class KeyExists(StorageError):
    """A create found the key already present."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key already exists: {key}")
        self.key = key


class KeyNotFound(StorageError):
    """The key does not exist."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class RevisionConflict(StorageError):
    """A compare-and-swap failed: the key's mod_revision was not the expected one.

    `current` is the key as it is now (None when the backend could not say).
    """

    def __init__(self, key: str, current: KeyValue | None) -> None:
        now = f" (now at revision {current.mod_revision})" if current is not None else ""
        super().__init__(f"revision conflict on {key}{now}")
        self.key = key
        self.current = current


class Compacted(StorageError):
    """The requested revision was compacted away; relist and watch from the new revision.

    `compacted_revision` is the oldest revision still available (0 when unknown).
    """

    def __init__(self, requested_revision: int, compacted_revision: int) -> None:
        super().__init__(f"revision {requested_revision} has been compacted "
                         f"(oldest available: {compacted_revision or 'unknown'})")
        self.requested_revision = requested_revision
        self.compacted_revision = compacted_revision


class FutureRevision(StorageError):
    """The requested revision is newer than the store's current revision."""

    def __init__(self, requested_revision: int) -> None:
        super().__init__(f"revision {requested_revision} is a future revision")
        self.requested_revision = requested_revision


class Unavailable(StorageError):
    """The backend could not be reached or did not answer in time."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TransformFailed(StorageError):
    """A stored value could not be decrypted (a missing or wrong key, tampered data).

    `key` is the first key that failed. A list sets `partial`: the same list without the
    values that failed (and `failed_keys` names them), so a cache can keep the rest.
    """

    def __init__(self, key: str, reason: str, *, partial: ListResult | None = None,
                 failed_keys: tuple[str, ...] = ()) -> None:
        super().__init__(f"unable to transform key {json.dumps(key)}: {reason}")
        self.key = key
        self.reason = reason
        self.partial = partial
        self.failed_keys = failed_keys or (key,)
