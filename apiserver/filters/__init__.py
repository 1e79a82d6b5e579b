"""The filters in front of every request: deadlines (`timeout`) and the max-in-flight limit
with its per-user fairness and long-running budget (`maxinflight`), as kube-apiserver's
`WithRequestDeadline`, `WithTimeoutForNonLongRunningRequests` and `WithMaxInFlightLimit`."""

from apiserver.filters.longrunning import is_long_running
from apiserver.filters.maxinflight import InflightLimiter, Seat, too_many_requests
from apiserver.filters.timeout import request_deadline, timed_out

__all__ = ["InflightLimiter", "Seat", "is_long_running", "request_deadline", "timed_out", "too_many_requests"]
