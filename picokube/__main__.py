"""`python -m picokube` runs the `picokube` CLI (how `up --detach` starts its supervisor)."""

from picokube.cli import main

main()
