"""The controller-manager: the control loops that turn declared objects into their parts.

Each controller is one package (`replicaset/`, `deployment/`, ...) with a class built from a
`ControllerContext`; `manager.py` lists them and runs them in one process over one shared
set of informers. Run it with `python -m controllers --kubeconfig FILE`.
"""

from controllers.config import ControllerManagerConfig
from controllers.context import Controller, ControllerContext

__all__ = ["Controller", "ControllerContext", "ControllerManagerConfig"]
