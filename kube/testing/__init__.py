"""Test support: real processes for tests to drive, and the one way tests wait.

- `process.Process`: one child process (own session, log file, SIGTERM then SIGKILL);
  every harness below is built on it;
- `ports`: free loopback ports, waiting for a port to listen;
- `etcd.EtcdProcess`: a private etcd; `apiserver.ApiServerHarness`: a real API server on
  it with its own PKI, tokens and key prefix, which also starts components under test
  with one of its identities (`component()`);
- `cluster.start_cluster`: a whole cluster through `picokube up --detach`;
- `eventually`: polling with a deadline instead of sleeping.

Unlike the rest of `kube`, these modules may import the `picokube` application (for its
etcd command line, PKI and token files): they exist to run the whole system. Nothing is
imported here, so each stays cheap to import on its own.
"""
