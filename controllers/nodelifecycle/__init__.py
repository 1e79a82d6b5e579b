from controllers.nodelifecycle.controller import NodeLifecycleController

__all__ = ["NodeLifecycleController"]
