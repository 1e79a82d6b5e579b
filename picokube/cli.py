"""The `picokube` console script: run a local cluster (`up`, `down`, `status`) or one component.

`picokube apiserver|controller-manager|scheduler|kubelet|proxy|dns ARGS...` replaces itself with
`python -m <package> ARGS...` (packages `apiserver`, `controllers`, `scheduler`,
`kubelet`, `proxy`, `clusterdns`), passing every argument through untouched, `--help` included, so each
component owns its own flags. The hidden `_supervise` command is how `up --detach` runs
the supervisor in the background.

Exit codes: 0 on success, 1 when the command could not do what was asked (the reason is
printed on stderr), 2 for a usage error.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import socket
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import httpx
import typer

from kube.bootstraptoken import TOKEN_PATTERN, parse_token
from kube.client.config import ClientConfig, KubeconfigError, load_kubeconfig
from kube.csr import ca_cert_hash
from kube.duration import parse_go_duration
from kube.testing.robustness.runner import DEFAULT_COMPONENTS
from picokube.bootstrap import create_token, delete_token, ensure_join_objects, list_tokens
from picokube.certificate_manager import CertificateError
from picokube.chaos import chaos as run_chaos
from picokube.config import DEFAULT_NODE_CAPACITY, ClusterConfig, parse_endpoints
from picokube.containerd import import_image
from picokube.discovery import DiscoveryError
from picokube.down import down as run_down
from picokube.images import BUSYBOX_IMAGE, build_busybox_image
from picokube.join import JoinConfig, run_join
from picokube.state import ClusterLocked
from picokube.status import status as run_status
from picokube.up import (
    UpError,
    resolve_runtime,
    supervise,
    up_detached,
    up_foreground,
)

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

DEFAULT_DATA_DIR = "~/.picokube"
COMPONENT_PACKAGES = {
    "apiserver": "apiserver",
    "controller-manager": "controllers",
    "scheduler": "scheduler",
    "kubelet": "kubelet",
    "proxy": "proxy",
    "dns": "clusterdns",
}
PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}



class Runtime(str, Enum):
    auto = "auto"
    cri = "cri"
    simulated = "simulated"


class Output(str, Enum):
    text = "text"
    json = "json"


app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Run a small, real Kubernetes control plane on this machine.")

DataDir = Annotated[str, typer.Option("--data-dir", help="Where the cluster keeps its files and logs.")]


def _data_dir(value: str) -> Path:
    return Path(value).expanduser().resolve()


def _fail(message: str) -> NoReturn:
    typer.echo(f"picokube: {message}", err=True)
    raise typer.Exit(1)


def _setup_logging() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(message)s")
    for noisy in ("httpx", "httpcore"):  # one line per probe request would drown the events
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _absolute(path: str | None) -> str | None:
    """A file flag as an absolute path: the components run in the data dir, not here."""
    return str(Path(path).expanduser().resolve()) if path else None


@app.command()
def up(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    port: Annotated[int, typer.Option(help="API server port on 127.0.0.1.")] = 6443,
    etcd_port: Annotated[int, typer.Option(help="Client port of the cluster's own etcd (peer: +1).")] = 2379,
    etcd_endpoints: Annotated[str | None, typer.Option(
        help="Use these existing etcd members (comma-separated URLs) instead of starting one.")] = None,
    etcd_cafile: Annotated[str | None, typer.Option(
        help="With --etcd-endpoints: the CA that verifies the members' https serving certificates.")] = None,
    etcd_certfile: Annotated[str | None, typer.Option(
        help="With --etcd-endpoints: the API server's client certificate towards etcd.")] = None,
    etcd_keyfile: Annotated[str | None, typer.Option(help="With --etcd-endpoints: the key of --etcd-certfile.")] = None,
    nodes: Annotated[int, typer.Option(help="How many kubelets (nodes node-1..node-N) to run.")] = 1,
    runtime: Annotated[Runtime, typer.Option(help="Container runtime of the kubelets.")] = Runtime.auto,
    containerd_socket: Annotated[str | None, typer.Option(help="containerd socket for --runtime cri.")] = None,
    node_capacity: Annotated[str, typer.Option(help="Capacity simulated nodes report.")] = DEFAULT_NODE_CAPACITY,
    pod_start_delay: Annotated[float, typer.Option(
        help="Seconds a simulated container takes to start (--runtime simulated).")] = 0.0,
    node_monitor_grace_period: Annotated[float | None, typer.Option(
        help="Seconds without a node Lease renewal before the node is Unknown "
             "(controller-manager; default 40).")] = None,
    node_status_update_frequency: Annotated[float | None, typer.Option(
        help="Seconds between a kubelet's Lease renewals and status heartbeats (default 10).")] = None,
    max_container_restart_period: Annotated[float | None, typer.Option(
        help="Most seconds a kubelet's CrashLoopBackOff waits between restarts (default 300).")] = None,
    tracing: Annotated[bool, typer.Option(
        help="Trace every component; spans are kept by the API server (pkctl trace).")] = True,
    otlp_endpoint: Annotated[str | None, typer.Option(
        help="Also send every component's spans to this OTLP/HTTP collector (http://host:4318).")] = None,
    service_cluster_ip_range: Annotated[str, typer.Option(
        help="CIDR the API server allocates Service cluster IPs from.")] = "10.96.0.0/12",
    service_node_port_range: Annotated[str, typer.Option(
        help="Range the API server allocates Service node ports from.")] = "30000-32767",
    controller_managers: Annotated[int, typer.Option(
        help="How many controller-managers to run; one leads (Lease kube-system/kube-controller-manager).")] = 1,
    schedulers: Annotated[int, typer.Option(
        help="How many schedulers to run; one leads (Lease kube-system/kube-scheduler).")] = 1,
    etcd_members: Annotated[int, typer.Option(
        help="How many members the cluster's own etcd has (client ports --etcd-port + 2i, peer +1).")] = 1,
    apiservers: Annotated[int, typer.Option(
        help="How many API servers to run; above 1 they listen on --port + 1.. behind HAProxy on --port.")] = 1,
    apiserver_workers: Annotated[int, typer.Option(
        help="Serving processes per API server on its one address (the API server's --workers).")] = 1,
    detach: Annotated[bool, typer.Option(help="Run in the background; return once every node is Ready.")] = False,
    timeout: Annotated[float, typer.Option(help="With --detach: seconds to wait for a Ready cluster.")] = 120.0,
) -> None:
    """Start etcd, the API server, the controller-manager, the scheduler and the kubelets."""
    try:
        chosen, reason = resolve_runtime(runtime.value)
        config = ClusterConfig(
            data_dir=_data_dir(data_dir), port=port, etcd_port=etcd_port,
            etcd_endpoints=parse_endpoints(etcd_endpoints) if etcd_endpoints else (),
            etcd_cafile=_absolute(etcd_cafile), etcd_certfile=_absolute(etcd_certfile),
            etcd_keyfile=_absolute(etcd_keyfile),
            nodes=nodes, runtime=chosen, containerd_socket=containerd_socket, node_capacity=node_capacity,
            pod_start_delay=pod_start_delay, node_monitor_grace_period=node_monitor_grace_period,
            node_status_update_frequency=node_status_update_frequency,
            max_container_restart_period=max_container_restart_period, tracing=tracing,
            otlp_endpoint=otlp_endpoint, service_cluster_ip_range=service_cluster_ip_range,
            service_node_port_range=service_node_port_range, controller_managers=controller_managers,
            schedulers=schedulers, etcd_members=etcd_members, apiservers=apiservers,
            apiserver_workers=apiserver_workers)
    except (UpError, ValueError) as e:
        _fail(str(e))
    typer.echo(f"Using runtime {chosen} ({reason})")
    _setup_logging()
    try:
        code = up_detached(config, timeout=timeout) if detach else up_foreground(config)
    except UpError as e:
        _fail(str(e))
    raise typer.Exit(code)


@app.command()
def down(data_dir: DataDir = DEFAULT_DATA_DIR) -> None:
    """Stop every process `picokube up` started for the data dir."""
    _setup_logging()
    raise typer.Exit(run_down(_data_dir(data_dir)))


@app.command()
def status(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    output: Annotated[Output, typer.Option("-o", "--output", help="Output format.")] = Output.text,
) -> None:
    """Show the cluster's endpoints and whether each component runs."""
    raise typer.Exit(run_status(_data_dir(data_dir), output=output.value))


image_app = typer.Typer(no_args_is_help=True, help="Manage images on the cluster's CRI nodes.")
app.add_typer(image_app, name="image")


@image_app.command("import")
def image_import(
    file: Annotated[Path, typer.Argument(help="An OCI or docker image tarball (docker save, ctr export).")],
    node: Annotated[list[str] | None, typer.Option("--node", help="Only this node (repeatable); default all.")] = None,
    data_dir: DataDir = DEFAULT_DATA_DIR,
) -> None:
    """Load an image tarball into nodes' containerd, so pods can use it without a registry."""
    try:
        config = ClusterConfig.load(_data_dir(data_dir))
    except (OSError, ValueError):
        _fail(f"no cluster in {_data_dir(data_dir)}: run `picokube up` first")
    if config.runtime != "cri":
        _fail("image import needs CRI nodes (picokube up --runtime cri); simulated nodes have every image")
    if not file.is_file():
        _fail(f"{file}: no such file")
    targets = node or config.node_names
    unknown = [n for n in targets if n not in config.node_names]
    if unknown:
        _fail(f"unknown node(s) {', '.join(unknown)}; nodes are {', '.join(config.node_names)}")
    try:
        for name in targets:
            import_image(config, name, file)
            typer.echo(f"imported {file.name} into {name}")
    except RuntimeError as e:
        _fail(str(e))


@image_app.command("busybox")
def image_busybox(
    file: Annotated[Path, typer.Argument(help="Where to write the OCI image tarball.")],
    name: Annotated[str, typer.Option("--name", help="The image reference it is imported as.")] = BUSYBOX_IMAGE,
) -> None:
    """Build a small image from the static busybox binary (sh, httpd, nc...), no registry needed.

    Load it with `picokube image import FILE`, or into a compose node with
    `docker compose exec -T kubelet-1 ctr -n k8s.io images import - < FILE`.
    """
    try:
        build_busybox_image(file, name, ["sh"])
    except (FileNotFoundError, OSError) as e:
        _fail(str(e))
    typer.echo(f"wrote {name} to {file}")


token_app = typer.Typer(no_args_is_help=True, help="Manage bootstrap tokens, with which machines join the cluster.")
app.add_typer(token_app, name="token")


def _admin_config(data_dir: str) -> tuple[ClusterConfig, ClientConfig]:
    try:
        config = ClusterConfig.load(_data_dir(data_dir))
        return config, load_kubeconfig(config.admin_kubeconfig)
    except (OSError, ValueError, TypeError, KubeconfigError):
        _fail(f"no cluster in {_data_dir(data_dir)}: run `picokube up` first")


@token_app.command("create")
def token_create(
    ttl: Annotated[str, typer.Option(help="How long the token is valid (Go duration; 0 never expires).")] = "24h",
    print_join_command: Annotated[bool, typer.Option(
        "--print-join-command", help="Print the whole `picokube join` command instead of the token.")] = False,
    description: Annotated[str, typer.Option(help="A note kept with the token.")] = "",
    data_dir: DataDir = DEFAULT_DATA_DIR,
) -> None:
    """Create a bootstrap token (`[a-z0-9]{6}.[a-z0-9]{16}`) a machine joins with."""
    try:
        seconds = parse_go_duration(ttl)
    except ValueError as e:
        _fail(f"--ttl: {e}")
    if seconds < 0:
        _fail(f"--ttl: {ttl} is negative (0 means a token that never expires)")
    config, admin = _admin_config(data_dir)
    try:
        ensure_join_objects(admin, server=config.apiserver_url)
        token = create_token(admin, ttl=dt.timedelta(seconds=seconds) if seconds else None, description=description)
    except (RuntimeError, httpx.HTTPError) as e:
        _fail(str(e))
    if not print_join_command:
        typer.echo(token)
        return
    assert admin.ca_data is not None
    typer.echo(f"picokube join --server {config.apiserver_url} --token {token} "
               f"--discovery-token-ca-cert-hash {ca_cert_hash(admin.ca_data)}")


@token_app.command("list")
def token_list(data_dir: DataDir = DEFAULT_DATA_DIR) -> None:
    """List the bootstrap tokens (their ids, never their secrets)."""
    _, admin = _admin_config(data_dir)
    try:
        tokens = list_tokens(admin)
    except httpx.HTTPError as e:
        _fail(str(e))
    typer.echo(f"{'TOKEN ID':<10}{'EXPIRES':<22}{'EXTRA GROUPS'}")
    for t in tokens:
        typer.echo(f"{t.get('token-id', ''):<10}{t.get('expiration', '<forever>'):<22}{t.get('auth-extra-groups', '')}")


@token_app.command("delete")
def token_delete(tokens: Annotated[list[str], typer.Argument(help="Token ids or whole tokens.")],
                 data_dir: DataDir = DEFAULT_DATA_DIR) -> None:
    """Delete bootstrap tokens; machines can no longer join with them."""
    _, admin = _admin_config(data_dir)
    for token in tokens:
        try:
            if not delete_token(admin, token):
                _fail(f"bootstrap token {token.split('.')[0]!r} not found")
        except httpx.HTTPError as e:
            _fail(str(e))
        typer.echo(f"bootstrap token {token.split('.')[0]!r} deleted")


@app.command()
def join(
    server: Annotated[str, typer.Option(help="The API server's URL (https://host:6443).")],
    token: Annotated[str, typer.Option(help="A bootstrap token from `picokube token create`.")],
    discovery_token_ca_cert_hash: Annotated[str, typer.Option(
        help="sha256:<hex> of the cluster CA's public key, as `token create --print-join-command` prints it.")],
    node_name: Annotated[str | None, typer.Option(help="This node's name (default: the host name).")] = None,
    runtime: Annotated[Runtime, typer.Option(help="Container runtime of the kubelet.")] = Runtime.auto,
    node_capacity: Annotated[str, typer.Option(help="Capacity a simulated node reports.")] = DEFAULT_NODE_CAPACITY,
    pod_cidr: Annotated[str, typer.Option(help="This node's pod subnet.")] = "10.244.100.0/24",
    data_dir: DataDir = "~/.picokube-node",
) -> None:
    """Join this machine to a cluster as a node: verify the CA, get a certificate, run a kubelet."""
    _setup_logging()
    if parse_token(token) is None:
        _fail(f"the token must match {TOKEN_PATTERN.pattern} (picokube token create prints one)")
    try:
        chosen, _ = resolve_runtime(runtime.value)
    except UpError as e:
        _fail(str(e))
    name = node_name or socket.gethostname().lower()
    config = JoinConfig(server=server, token=token, ca_cert_hash=discovery_token_ca_cert_hash, node_name=name,
                        runtime=chosen, data_dir=_data_dir(data_dir),
                        node_capacity=node_capacity if chosen != "cri" else None, pod_cidr=pod_cidr)
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        code = run_join(config)
    except (DiscoveryError, CertificateError) as e:
        _fail(f"join failed: {e}")
    except ClusterLocked:
        _fail(f"something already runs for {config.data_dir}; stop it with `picokube down --data-dir {data_dir}`")
    raise typer.Exit(code)


@app.command()
def chaos(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    duration: Annotated[float, typer.Option(help="Seconds of load and faults per run.")] = 60.0,
    runs: Annotated[int, typer.Option(help="How many runs (seeds SEED, SEED+1, ...).")] = 1,
    faults: Annotated[int, typer.Option(help="Faults per run.")] = 8,
    seed: Annotated[int | None, typer.Option(help="Seed of the first run (default: random, printed).")] = None,
    components: Annotated[str, typer.Option(help="Comma-separated components to fault (names as in status).")] = (
        ",".join(DEFAULT_COMPONENTS)),
) -> None:
    """SIGKILL and SIGSTOP the cluster's processes under load, then check what clients saw (exit 1 on a violation)."""
    chosen = seed if seed is not None else random.SystemRandom().randrange(10**6)
    ok = run_chaos(data_dir=_data_dir(data_dir), seed=chosen, runs=runs, duration=duration, faults=faults,
                   components=[c for c in components.split(",") if c], log=typer.echo)
    if not ok:
        _fail(f"a robustness check failed (repeat with --seed {chosen})")


@app.command("_supervise", hidden=True)
def supervise_command(data_dir: DataDir = DEFAULT_DATA_DIR) -> None:
    """Run the supervisor of a prepared data dir (what `up --detach` starts)."""
    _setup_logging()
    path = _data_dir(data_dir)
    try:
        config = ClusterConfig.load(path)
    except (OSError, ValueError, TypeError) as e:
        _fail(f"no usable cluster.json in {path}: {e}")
    raise typer.Exit(supervise(config))


def _component_command(name: str, package: str) -> None:
    def run(ctx: typer.Context) -> None:
        args = [sys.executable, "-m", package, *ctx.args]
        os.execv(sys.executable, args)

    run.__doc__ = f"Run the {name} (python -m {package}); all arguments pass through."
    app.command(name, context_settings=PASSTHROUGH, add_help_option=False)(run)


for _name, _package in COMPONENT_PACKAGES.items():
    _component_command(_name, _package)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="picokube")
