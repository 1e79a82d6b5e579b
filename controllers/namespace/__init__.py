from controllers.namespace.controller import NamespaceController

__all__ = ["NamespaceController"]
