from controllers.garbagecollector.controller import GarbageCollector

__all__ = ["GarbageCollector"]
