"""What picokube's docker compose services run besides the components themselves.

- `python -m picokube.compose.init`: the one-shot step that issues the cluster's
  credentials into the shared config volume and hands the admin kubeconfig to the host;
- `python -m picokube.compose.node`: PID 1 of a kubelet node container, which runs the
  node's own containerd and then the kubelet, as kind's node images do.
"""
