"""Which requests are long-running: they stream for as long as the client wants.

Mirrors kube-apiserver's `BasicLongRunningRequestCheck(verbs={watch, proxy},
subresources={attach, exec, proxy, log, portforward})`. A long-running request takes no seat
of the max-in-flight limit and is not cut off by `--request-timeout`; it has its own budget
(`apiserver.filters.maxinflight`) and its own end (a watch's `timeoutSeconds`, a log's end).
As upstream, every `log` request counts, not only `follow=true`: a plain log read is a proxy to
a kubelet that may take as long as the log is large.
"""

from __future__ import annotations

from apiserver.endpoints.request_info import RequestInfo

__all__ = ["is_long_running"]

_VERBS = frozenset({"watch", "proxy"})
_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})


def is_long_running(info: RequestInfo) -> bool:
    """True for a watch, a proxy and a pod's attach, exec, log or port-forward."""
    return info.is_resource_request and (info.verb in _VERBS or info.subresource in _SUBRESOURCES)
