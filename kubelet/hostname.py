"""The hostname a pod's sandbox gets, as kubelet's GeneratePodHostNameAndDomain picks it.

The pod's `spec.hostname` when set, else its name. A pod name may be a 253-character DNS
subdomain, but a hostname is at most 63 characters (sethostname refuses longer ones), so a
longer one is cut to 63 and any trailing '-' or '.' trimmed, as upstream does. Pure, so it
is safe to call from any worker.
"""

from __future__ import annotations

import logging

__all__ = ["HOSTNAME_MAX_LEN", "pod_hostname"]

logger = logging.getLogger(__name__)

HOSTNAME_MAX_LEN = 63


def pod_hostname(pod_name: str, spec_hostname: str | None = None) -> str:
    """The sandbox hostname for a pod; never longer than 63 characters, never ending in '-' or '.'."""
    hostname = spec_hostname or pod_name
    if len(hostname) <= HOSTNAME_MAX_LEN:
        return hostname
    truncated = hostname[:HOSTNAME_MAX_LEN].rstrip("-.")
    logger.info("Hostname for pod was too long, truncated it", extra={"pod": pod_name, "hostname": truncated})
    return truncated
