"""The cluster's encryption-at-rest configuration: Secrets sealed with a key of its own.

`ensure_encryption_config(path)` leaves at `path` (mode 0600) an
apiserver.config.k8s.io/v1 EncryptionConfiguration that encrypts Secrets with AES-GCM under a
fresh random 32-byte key, identity after it so Secrets stored before encryption was on still
read. An existing file is kept as it is: the key in it is what makes the stored Secrets
readable, and an operator may have rotated it, so it is never regenerated or rewritten.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from picokube._files import write_file_atomic

__all__ = ["ensure_encryption_config", "ENCRYPTION_CONFIG_NAME"]

ENCRYPTION_CONFIG_NAME = "encryption-config.yaml"


def ensure_encryption_config(path: Path) -> Path:
    """Write the configuration unless `path` exists; return `path`."""
    if not path.exists():
        secret = base64.b64encode(os.urandom(32)).decode()
        text = ("apiVersion: apiserver.config.k8s.io/v1\n"
                "kind: EncryptionConfiguration\n"
                "resources:\n"
                "  - resources: [secrets]\n"
                "    providers:\n"
                "      - aesgcm:\n"
                "          keys:\n"
                f"            - name: key1\n"
                f"              secret: {secret}\n"
                "      - identity: {}\n")
        write_file_atomic(path, text.encode(), mode=0o600)
    return path
