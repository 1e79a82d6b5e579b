"""The pkctl command tree: one typer app, each verb from its own module under `kubectl.cmd`."""

from __future__ import annotations

import typer

from kubectl.cmd.apply import apply, create
from kubectl.cmd.completion import completion
from kubectl.cmd.config import config_app
from kubectl.cmd.delete import delete
from kubectl.cmd.describe import describe
from kubectl.cmd.exec import exec_
from kubectl.cmd.expose import expose
from kubectl.cmd.get import get
from kubectl.cmd.info import api_resources, version
from kubectl.cmd.logs import logs
from kubectl.cmd.node import cordon, drain, uncordon
from kubectl.cmd.port_forward import port_forward
from kubectl.cmd.rollout import rollout_app
from kubectl.cmd.scale import scale
from kubectl.cmd.trace import trace
from kubectl.cmd.wait import wait

__all__ = ["app", "NEEDS_NO_SERVER"]

app = typer.Typer(name="pkctl", no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
                  help="pkctl controls a picokube cluster, like kubectl.\n\n"
                       "Global flags, anywhere on the line: --kubeconfig FILE, --context NAME, --server URL, "
                       "--token T, --certificate-authority FILE, --insecure-skip-tls-verify, -n NS, -A.")

for fn in (create, apply, get, describe, delete, expose, logs, scale, cordon, uncordon, drain, wait, version,
           completion, trace, port_forward):
    app.command(fn.__name__.replace("_", "-"))(fn)
app.command("api-resources")(api_resources)
app.command("exec")(exec_)
app.add_typer(rollout_app, name="rollout")
app.add_typer(config_app, name="config")

# Verbs that work without a reachable cluster (they read files or print).
NEEDS_NO_SERVER = frozenset({"config", "completion", "version"})
