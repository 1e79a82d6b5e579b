"""Work queues with client-go semantics (dedup, processing set, rate-limited requeue)."""

from kube.workqueue.queue import ShutDown, WorkQueue
from kube.workqueue.rate_limiter import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "ShutDown",
    "WorkQueue",
    "default_controller_rate_limiter",
]
