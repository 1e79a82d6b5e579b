"""Makes `tests.clusterdns.upstream` importable whatever pytest's import mode.

The test folders have no `__init__.py`, so the helpers are imported by their full dotted
name from the checkout root.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)
