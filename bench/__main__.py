"""`python -m bench NAME [--json] [options]`: run one benchmark; with --json the last line is a JSON object."""

from __future__ import annotations

import argparse
import importlib
import json
import sys

BENCHMARKS = {"api": "bench.api", "controllers": "bench.controllers", "failover": "bench.failover",
              "footprint": "bench.footprint",
              "scheduler": "bench.scheduler", "services": "bench.services", "startup": "bench.startup",
              "streaming": "bench.streaming"}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in BENCHMARKS:
        print(f"usage: python -m bench {{{','.join(sorted(BENCHMARKS))}}} [--json] [options]", file=sys.stderr)
        return 2
    module = importlib.import_module(BENCHMARKS[args[0]])
    parser = argparse.ArgumentParser(prog=f"python -m bench {args[0]}")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object on the last line")
    module.add_arguments(parser)
    opts = parser.parse_args(args[1:])
    figures = module.run(opts)
    for key, value in figures.items():
        print(f"{key:45s} {value}", file=sys.stderr if opts.json else sys.stdout)
    if opts.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
