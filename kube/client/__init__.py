"""Talking to the API server: kubeconfig loading, the async REST client and discovery."""

from kube.client.config import ClientConfig, KubeconfigError, load_kubeconfig, resolve_kubeconfig_path
from kube.client.discovery import RESTMapper, discover
from kube.client.rest import PATCH_TYPES, ObjectList, RESTClient, WatchEvent

__all__ = ["ClientConfig", "KubeconfigError", "load_kubeconfig", "resolve_kubeconfig_path", "RESTClient",
           "ObjectList", "WatchEvent", "PATCH_TYPES", "RESTMapper", "discover"]
