"""Talking to the API server: kubeconfig loading and the async REST client."""

from kube.client.config import ClientConfig, KubeconfigError, load_kubeconfig, resolve_kubeconfig_path
from kube.client.rest import PATCH_TYPES, ObjectList, RESTClient, WatchEvent

__all__ = ["ClientConfig", "KubeconfigError", "load_kubeconfig", "resolve_kubeconfig_path", "RESTClient",
           "ObjectList", "WatchEvent", "PATCH_TYPES"]
