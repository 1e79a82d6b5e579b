"""The `Status{status: Success}` answer of subresources that create nothing readable."""

from __future__ import annotations

from typing import Any

__all__ = ["success"]


def success(code: int = 201) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
