"""The API server's storage layer: a revisioned key-value store with watches, backed by etcd.

Callers depend on the `Storage` protocol and the errors in `errors`; `Etcd3Storage` is the
one production implementation and the only place an etcd client type appears.
"""

from __future__ import annotations

import logging

from .errors import (
    Compacted,
    FutureRevision,
    KeyExists,
    KeyNotFound,
    RevisionConflict,
    StorageError,
    TransformFailed,
    Unavailable,
)
from .etcd3 import Etcd3Storage
from .etcd_channel import EtcdTLSConfig
from .interface import KeyValue, ListResult, Storage, WatchEvent, WatchEventType

__all__ = [
    "Storage", "KeyValue", "ListResult", "WatchEvent", "WatchEventType", "Etcd3Storage", "EtcdTLSConfig",
    "StorageError", "KeyExists", "KeyNotFound", "RevisionConflict", "Compacted", "FutureRevision",
    "Unavailable", "TransformFailed",
]

logger = logging.getLogger(__name__)
