"""Resource quantities (`100m`, `1.5`, `128Mi`, `1e3`) as in apimachinery's resource.Quantity.

Values are parsed to exact Decimals; `cpu_millis` and `to_int` give the integer units the
scheduler and kubelet account in (millicores, bytes).
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

__all__ = ["cpu_millis", "format_bytes", "parse_capacity", "parse_quantity", "to_int"]

_SUFFIX = {
    "Ki": Decimal(1024), "Mi": Decimal(1024**2), "Gi": Decimal(1024**3), "Ti": Decimal(1024**4),
    "Pi": Decimal(1024**5), "Ei": Decimal(1024**6),
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
}
_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")


def parse_quantity(text: str | float) -> Decimal:
    """Parse a quantity; raise ValueError naming the text when it is not one."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Decimal(str(text))
    if not isinstance(text, str):  # null, a list, a map in a decoded body: not a quantity
        raise ValueError(f"a quantity must be a string or a number, not {text!r}")
    m = _RE.match(text.strip())
    if not m:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    try:
        number = Decimal(m[1])
    except InvalidOperation as e:  # pragma: no cover - the regex admits only numbers
        raise ValueError(f"invalid quantity {text!r}") from e
    if m[2]:
        return number * (Decimal(10) ** int(m[2][1:]))
    return number * _SUFFIX[m[3] or ""]


def cpu_millis(text: str | float) -> int:
    """CPU in millicores, rounded up like Kubernetes' MilliValue."""
    return int((parse_quantity(text) * 1000).to_integral_value(rounding=ROUND_CEILING))


def to_int(text: str | float) -> int:
    """A quantity as an integer (bytes, pod counts), rounded up."""
    return int(parse_quantity(text).to_integral_value(rounding=ROUND_CEILING))


def format_bytes(n: int) -> str:
    """Bytes in the largest binary suffix that divides them exactly (`8Gi`, `1536Mi`)."""
    for suffix, mult in (("Ei", 1024**6), ("Pi", 1024**5), ("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2),
                         ("Ki", 1024)):
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def parse_capacity(text: str) -> dict[str, str]:
    """`cpu=4,memory=8Gi` -> {"cpu": "4", "memory": "8Gi"}: a node's resources as flags give them.

    Shared by the kubelet's and `picokube up`'s `--node-capacity`. Raises ValueError naming
    the flag on a malformed item or an empty list; the quantities themselves are not parsed.
    """
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"--node-capacity: {item!r} is not NAME=QUANTITY")
        out[name.strip()] = value.strip()
    if not out:
        raise ValueError("--node-capacity: give at least one NAME=QUANTITY")
    return out
