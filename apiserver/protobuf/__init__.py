"""Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`) for built-in kinds.

- `descriptors`: upstream's message descriptors (extracted from kubectl) and message classes;
- `json_mapping`: a message as the JSON Kubernetes writes for it;
- `codec`: the `k8s\\x00` + `runtime.Unknown` envelope around an object.
"""
