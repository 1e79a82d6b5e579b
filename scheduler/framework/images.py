"""Image names compared the way the container runtime resolves them."""

from __future__ import annotations

__all__ = ["normalized_image_name"]


def normalized_image_name(name: str) -> str:
    """`docker.io/library/name:tag` form; a name without tag or digest gets `:latest`."""
    last = name.rsplit("/", 1)[-1]
    if "@" not in name and ":" not in last:
        name += ":latest"
    first, slash, _rest = name.partition("/")
    if not slash:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name
