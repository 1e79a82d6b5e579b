"""Container runtimes behind the CRI protocol the kubelet speaks (`interface.RuntimeService`)."""
