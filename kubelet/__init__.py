"""picokube's kubelet: the node agent that makes pods bound to its node real through a runtime."""
