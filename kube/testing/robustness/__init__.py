"""A robustness suite in the manner of etcd's `tests/robustness`: faults, load, recorded histories, checks.

- `history`: what a run records (watch segments, writes, LIST answers), as plain values;
- `watch_checks`, `state_checks`, `workload.check_converged`: pure checks over them;
- `recorders`, `workload.Rollouts`: the load (watchers, a ConfigMap writer, listers, rollouts);
- `etcd_gateway`: etcd's own history of a prefix, the reference the checks compare with;
- `faults`: SIGKILL/SIGSTOP of a `picokube up` cluster's processes, seeded;
- `runner.run_once`: one run, its `RunReport` and summary line.

Used by `tests/robustness/` and by `picokube chaos`. Nothing is imported here.
"""
