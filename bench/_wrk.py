"""ConfigMap creates through the API server and raw etcd transactions, both driven by wrk.

The asyncio clients in `bench.api` share the two cores with the server they measure, and a
Python client costs about as much CPU per request as the server does. wrk, a C load generator,
costs a small fraction of that, so its figures are closer to the server's own ceiling; the
CPU it used is reported next to the servers' so the reader can check that claim on each run.

Two runs at the same concurrency (threads x keep-alive connections):
- the API: POST /api/v1/namespaces/<ns>/configmaps over HTTPS with the admin bearer token;
  every request names a new object (`<tag>-<thread>-<counter>`), so each is a real create;
- the floor: etcd's JSON gateway on the client port, POST /v3/kv/txn, a create-if-absent
  transaction (create_revision == 0, then put) on a new key per request, the same
  transaction `Etcd3Storage.create` sends over gRPC. etcd's gateway decodes the JSON and
  forwards it over gRPC inside etcd, so this floor costs etcd somewhat more than the API's
  own gRPC calls do: the ratio errs in the API's favour, never against it. wrk presents no
  client certificate, so the floor needs a plain-HTTP etcd (the bench's own runs without TLS).

Each response is checked in wrk's Lua `response()` hook, not sampled: an API create counts
only on 201, an etcd transaction only on 200 with `"succeeded":true`. A run where fewer than
half the requests were accepted raises `WrkFailed`; any failures short of that are reported
as figures, never dropped. Rates count accepted requests only.

CPU: utime+stime of the API server and etcd from /proc/<pid>/stat before and after each run,
and wrk's own from `getrusage(RUSAGE_CHILDREN)` (only wrk is reaped during a run). Linux only.
"""

from __future__ import annotations

import base64
import json
import os
import re
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kube.testing.apiserver import ApiServerHarness
from kube.testing.etcd import EtcdProcess

__all__ = ["WrkFailed", "WrkRun", "cpu_seconds", "wrk_figures"]

_MARK = "WRK-JSON "
_SUCCEEDED = '"succeeded":true'  # etcd omits the field when the compare failed
# Shared by both runs: per-thread counters (globals of each thread's Lua state, read back in
# done() through the thread handles kept by setup()) and one JSON line for the harness.
_LUA_COMMON = """
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  n, accepted, non2xx = 0, 0, 0
end
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, make_body(id, n))
end
function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
  elseif status == ACCEPT_STATUS and (ACCEPT_BODY == "" or string.find(body, ACCEPT_BODY, 1, true)) then
    accepted = accepted + 1
  end
end
function done(summary, latency, requests)
  local ok, bad = 0, 0
  for _, t in ipairs(threads) do
    ok = ok + t:get("accepted")
    bad = bad + t:get("non2xx")
  end
  local e = summary.errors
  io.write(string.format('%s{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"accepted":%d,' ..
    '"non2xx":%d,"socket_errors":%d}\\n', MARK, summary.requests, summary.duration, latency:percentile(50),
    latency:percentile(99), ok, bad, e.connect + e.read + e.write + e.timeout))
end
"""


class WrkFailed(RuntimeError):
    """Most of a run's requests were refused, or wrk itself failed: its figures mean nothing."""


@dataclass(frozen=True)
class WrkRun:
    """One wrk run: what the Lua hooks counted and the CPU each watched process used."""

    requests: int
    accepted: int
    non2xx: int
    socket_errors: int
    seconds: float
    p50_ms: float
    p99_ms: float
    cpu_s: dict[str, float]
    """CPU seconds used during the run, per watched process name, plus "wrk"."""

    @property
    def per_s(self) -> float:
        return self.accepted / self.seconds

    def cpu_per_1000(self, process: str) -> float:
        return self.cpu_s[process] * 1000 / max(1, self.accepted)


def cpu_seconds(pid: int) -> float:
    """utime+stime of a live process (all its threads) and its live children, in seconds; OSError once it has exited.

    The children count so that an API server with `--workers` is measured whole.
    """
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return own + sum(_live_cpu_seconds(int(child)) for child in children)


def _live_cpu_seconds(pid: int) -> float:
    """`cpu_seconds` of a child, 0 if it exited since it was listed (a worker being restarted)."""
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


def _lua_str(text: str) -> str:
    assert re.fullmatch(r"[ -~]*", text), "only printable ASCII goes into the script"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(*, url: str, script: str, workdir: Path, threads: int, connections: int, seconds: int,
            watch: dict[str, int]) -> WrkRun:
    """Run wrk with `script` (Lua defining make_body, ACCEPT_*, method and headers) against `url`.

    Blocks for about `seconds`. `watch` maps names to pids whose CPU is measured over the run.
    Raises WrkFailed if wrk fails or accepted under half of the requests; not thread-safe
    (the RUSAGE_CHILDREN delta assumes no other child of this process is reaped meanwhile).
    """
    wrk = shutil.which("wrk")
    if wrk is None:
        raise FileNotFoundError("wrk is not installed (Debian package `wrk`)")
    path = workdir / "wrk.lua"
    path.write_text(f"MARK = {_lua_str(_MARK)}\n{script}\n{_LUA_COMMON}")
    before = {name: cpu_seconds(pid) for name, pid in watch.items()}
    wrk_before = _children_cpu()
    proc = subprocess.run([wrk, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
                           "-s", str(path), url], capture_output=True, text=True, timeout=seconds + 60, check=False)
    cpu = {name: cpu_seconds(pid) - before[name] for name, pid in watch.items()}
    cpu["wrk"] = _children_cpu() - wrk_before
    line = next((x for x in proc.stdout.splitlines() if x.startswith(_MARK)), None)
    if proc.returncode != 0 or line is None:
        raise WrkFailed(f"wrk exited with {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    got = json.loads(line[len(_MARK):])
    run = WrkRun(requests=got["requests"], accepted=got["accepted"], non2xx=got["non2xx"],
                 socket_errors=got["socket_errors"], seconds=got["duration_us"] / 1e6,
                 p50_ms=got["p50_us"] / 1000, p99_ms=got["p99_us"] / 1000, cpu_s=cpu)
    if run.accepted * 2 < run.requests or run.accepted == 0:
        raise WrkFailed(f"{url}: only {run.accepted} of {run.requests} requests accepted ({run.non2xx} non-2xx, "
                        f"{run.socket_errors} socket errors)")
    return run


def api_script(api: ApiServerHarness, *, ns: str, tag: str) -> str:
    """Lua for creates of ConfigMaps `<tag>-<thread>-<n>` in `ns`, as the admin."""
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s-%d-%d"},
                       "data": {"k": "v" * 64}}, separators=(",", ":"))
    return (f'wrk.method = "POST"\nwrk.path = {_lua_str(f"/api/v1/namespaces/{ns}/configmaps?fieldManager=bench")}\n'
            f'wrk.headers["Authorization"] = {_lua_str("Bearer " + api.token("admin"))}\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
            'ACCEPT_STATUS, ACCEPT_BODY = 201, ""\n'
            f"function make_body(id, n) return string.format({_lua_str(body)}, {_lua_str(tag)}, id, n) end\n")


def etcd_script(*, tag: str) -> str:
    """Lua for create-if-absent transactions on keys `/bench-wrk/<tag>/...` plus 9 bytes unique per request.

    The gateway wants keys in base64. The prefix is padded to a multiple of 3 bytes, so its
    base64 can be followed by more base64 text: 12 decimal digits (thread, counter) are valid
    base64 of 9 bytes, distinct for distinct digits, which spares wrk an encoder in Lua.
    """
    prefix = f"/bench-wrk/{tag}/"
    prefix += "-" * (-len(prefix) % 3)
    key = base64.b64encode(prefix.encode()).decode() + "%02d%010d"
    value = base64.b64encode(json.dumps({"metadata": {"name": "x"}, "data": {"k": "v" * 64}}).encode()).decode()
    body = ('{"compare":[{"key":"' + key + '","result":"EQUAL","target":"CREATE","create_revision":"0"}],'
            '"success":[{"request_put":{"key":"' + key + '","value":"' + value + '"}}]}')
    return ('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
            f'ACCEPT_STATUS, ACCEPT_BODY = 200, {_lua_str(_SUCCEEDED)}\n'
            f"function make_body(id, n) return string.format({_lua_str(body)}, id, n, id, n) end\n")


def wrk_figures(*, api: ApiServerHarness, etcd: EtcdProcess, ns: str, workdir: Path, seconds: int,
                connections: int = 32, threads: int = 2) -> dict[str, Any]:
    """Raw etcd txns, then API creates, each for `seconds` at `connections` in flight; the named figures.

    `ns` must exist. Needs a plain-HTTP etcd (AssertionError otherwise) and blocks throughout.
    """
    assert etcd.pki is None, "wrk presents no client certificate: the floor needs a plain-HTTP etcd"
    c = connections
    pids = {"apiserver": api.process.pid, "etcd": etcd.process.pid}
    raw = run_wrk(url=f"{etcd.endpoint}/v3/kv/txn", script=etcd_script(tag=f"c{c}"), workdir=workdir,
                  threads=threads, connections=c, seconds=seconds, watch=pids)
    made = run_wrk(url=f"{api.server}/", script=api_script(api, ns=ns, tag=f"w{c}"), workdir=workdir,
                   threads=threads, connections=c, seconds=seconds, watch=pids)
    return {
        f"wrk_etcd_txn_per_s_{c}": round(raw.per_s, 1),
        f"wrk_api_create_per_s_{c}": round(made.per_s, 1),
        f"wrk_api_to_etcd_ratio_{c}": round(made.per_s / raw.per_s, 3),
        f"wrk_api_create_p50_ms_{c}": round(made.p50_ms, 2),
        f"wrk_api_create_p99_ms_{c}": round(made.p99_ms, 2),
        f"wrk_etcd_txn_p50_ms_{c}": round(raw.p50_ms, 2),
        f"wrk_etcd_txn_p99_ms_{c}": round(raw.p99_ms, 2),
        f"wrk_api_create_non2xx_{c}": made.non2xx,
        f"wrk_api_create_failed_{c}": made.requests - made.accepted,
        f"wrk_api_create_socket_errors_{c}": made.socket_errors,
        f"wrk_etcd_txn_non2xx_{c}": raw.non2xx,
        f"wrk_etcd_txn_failed_{c}": raw.requests - raw.accepted,
        f"wrk_etcd_txn_socket_errors_{c}": raw.socket_errors,
        "apiserver_cpu_s_per_1000_creates": round(made.cpu_per_1000("apiserver"), 3),
        "apiserver_cores_busy_during_creates": round(made.cpu_s["apiserver"] / made.seconds, 2),
        "etcd_cpu_s_per_1000_creates": round(made.cpu_per_1000("etcd"), 3),
        "etcd_cpu_s_per_1000_txns": round(raw.cpu_per_1000("etcd"), 3),
        "wrk_cpu_s_per_1000_requests": round(made.cpu_per_1000("wrk"), 3),
        "wrk_cpu_s_per_1000_txns": round(raw.cpu_per_1000("wrk"), 3),
    }
