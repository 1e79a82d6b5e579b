"""The picokube application: the `picokube` command that runs a whole local cluster.

This is the top of the stack, not part of the shared library `kube`: it imports the
components' entry points only as commands to start, and nothing below it imports it except
test support (`kube.testing` reuses its etcd, PKI and token helpers, as envtest does).

Modules, one job each: `etcd` (find and start etcd), `pki` (cluster CA and serving
certificate), `tokens` (the static token file), `kubeconfig` (kubeconfig files), `config`
(the resolved `up` flags and data dir layout), `supervisor` (start, restart, stop
processes), `state` (`state.json`, the data dir lock, process identity), `probe`
(readiness checks), `up`/`down`/`status` (the commands) and `cli` (the typer app).

Nothing is imported here, so `picokube.etcd` stays cheap to import for test fixtures.
"""
