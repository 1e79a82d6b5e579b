"""The API server's /metrics text: request counter, latency histogram, watches, process metrics."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from apiserver.metrics import Metrics


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, keyed by name and labels, parsed by prometheus_client's parser."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_requests_are_counted_by_verb_resource_and_code() -> None:
    m = Metrics()
    m.observe(verb="GET", resource="pods", code=200, seconds=0.01)
    m.observe(verb="GET", resource="pods", code=200, seconds=0.3)
    m.observe(verb="POST", resource="pods", code=409, seconds=0.02)
    got = samples(m.render())
    assert got[("apiserver_request_total", frozenset({("verb", "GET"), ("resource", "pods"), ("code", "200")}))] == 2
    assert got[("apiserver_request_total", frozenset({("verb", "POST"), ("resource", "pods"), ("code", "409")}))] == 1
    get_pods = frozenset({("verb", "GET"), ("resource", "pods")})
    assert got[("apiserver_request_duration_seconds_count", get_pods)] == 2
    assert abs(got[("apiserver_request_duration_seconds_sum", get_pods)] - 0.31) < 1e-9
    assert got[("apiserver_request_duration_seconds_bucket", get_pods | {("le", "0.025")})] == 1
    assert got[("apiserver_request_duration_seconds_bucket", get_pods | {("le", "+Inf")})] == 2


def test_the_longrunning_gauge_follows_the_open_watches() -> None:
    m = Metrics()
    m.inflight_watches += 1
    m.inflight_watches += 1
    m.inflight_watches -= 1
    assert m.inflight_watches == 1
    assert samples(m.render())[("apiserver_longrunning_requests", frozenset())] == 1


def test_process_metrics_are_exported_and_created_series_are_not() -> None:
    text = Metrics().render()
    names = {name for name, _ in samples(text)}
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
            "python_info"} <= names
    assert "# TYPE apiserver_request_total counter" in text
    assert not any(name.endswith("_created") for name in names)


def test_two_servers_in_one_process_keep_separate_counts() -> None:
    a, b = Metrics(), Metrics()
    a.observe(verb="GET", resource="nodes", code=200, seconds=0.001)
    assert "apiserver_request_total{" in a.render()
    assert "apiserver_request_total{" not in b.render()
