"""`python -m kube.cluster` runs the `picokube` CLI (how `up --detach` starts its supervisor)."""

from kube.cluster.cli import main

main()
