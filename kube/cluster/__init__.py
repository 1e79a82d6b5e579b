"""Running a local picokube cluster: the `picokube` launcher and what it is built from.

Modules, one job each: `etcd` (find and start etcd), `pki` (cluster CA and serving
certificate), `tokens` (the static token file), `kubeconfig` (kubeconfig files), `config`
(the resolved `up` flags and data dir layout), `supervisor` (start, restart, stop
processes), `state` (`state.json`, the data dir lock, process identity), `probe`
(readiness checks), `up`/`down`/`status` (the commands) and `cli` (the typer app).

Nothing is imported here, so `kube.cluster.etcd` stays cheap to import for test fixtures.
"""
