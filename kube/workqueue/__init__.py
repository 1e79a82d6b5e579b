"""Work queues with client-go semantics (dedup, processing set, rate-limited requeue)."""

from kube.workqueue.queue import ShutDown, WorkQueue
from kube.workqueue.rate_limiter import (BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter,
                                         RateLimiter, default_controller_rate_limiter)

__all__ = ["WorkQueue", "ShutDown", "RateLimiter", "ItemExponentialFailureRateLimiter", "BucketRateLimiter",
           "MaxOfRateLimiter", "default_controller_rate_limiter"]
