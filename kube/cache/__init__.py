"""Informers: list+watch caches with indexes (client-go tools/cache in miniature)."""

from kube.cache.factory import InformerFactory
from kube.cache.informer import EventHandler, SharedInformer
from kube.cache.reflector import Reflector
from kube.cache.store import IndexFunc, Store, meta_namespace_key

__all__ = [
    "EventHandler",
    "IndexFunc",
    "InformerFactory",
    "Reflector",
    "SharedInformer",
    "Store",
    "meta_namespace_key",
]
