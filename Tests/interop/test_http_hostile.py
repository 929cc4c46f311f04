"""Hostile HTTP against `quire exporter` (libmicrohttpd through QuireHTTP, the gateway's server too;
test_gateway_hostile.py runs the same generators, from hostile_http.py, against the gateway).

A few hundred raw-socket cases: malformed request lines, bad methods and targets, other HTTP
versions, huge and broken headers, bodies over the limit or cut short, garbage bytes, pipelining and
clients that send one byte a second. Each must get a well-formed HTTP/1.1 answer with the expected
status (or, where the client gave up first, no answer), and the exporter must keep serving /metrics
throughout: nothing a client sends can crash or hang it.
"""

import socket
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Proc, accepts, free_port, wait_until
from hostile_http import (ERRORS, Case, Target, bodies, exchange, garbage, headers, malformed_lines, methods, parse_responses,
                          pipelining, run_cases, targets, versions)

# The exporter's request timeout (not a flag): a request not in after this is cut off.
REQUEST_TIMEOUT_S = 10
# /metrics answers GET; its body limit is 16 KiB. The generators live in hostile_http.py (the gateway's corpus uses them too).
METRICS = Target(b"/metrics", get=200, post=405, max_body=16 * 1024, timeout_s=REQUEST_TIMEOUT_S)


class Exporter(Proc):
    def __init__(self, quire_bin, log_dir):
        self.port = free_port()
        # No broker: the SUB socket connects whenever one appears; /metrics says quire_up 0 meanwhile.
        super().__init__([quire_bin, "exporter", "--listen", "127.0.0.1:%d" % self.port,
                          "--stats", "tcp://127.0.0.1:%d" % free_port()],
                         log_dir / ("exporter-%d.log" % self.port))


@pytest.fixture
def exporter(quire_bin, procs, tmp_path):
    e = Exporter(quire_bin, tmp_path)
    procs.append(e)
    wait_until(lambda: e.alive() and accepts(e.port), 10, what="the exporter to listen")
    return e


def metrics_ok(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    [(status, headers, body)] = parse_responses(data)
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert "quire_up" in names
    return True



@pytest.mark.timeout_s(150)
def test_hostile_requests_get_well_formed_errors(exporter):
    groups = [malformed_lines(METRICS), methods(METRICS), targets(METRICS), versions(METRICS), headers(METRICS), bodies(METRICS),
              pipelining(METRICS)]
    total = 0
    for cases in groups:
        run_cases(exporter.port, cases)
        total += len(cases)
        assert metrics_ok(exporter.port)
        assert exporter.alive()
    assert total >= 150


@pytest.mark.timeout_s(150)
def test_garbage_bytes(exporter):
    statuses = run_cases(exporter.port, garbage(METRICS))
    assert set(statuses) <= ERRORS | {200}, statuses
    assert sum(statuses.values()) >= 100
    assert metrics_ok(exporter.port)
    assert exporter.alive()


@pytest.mark.timeout_s(90)
def test_slow_clients_are_cut_off_while_others_are_served(exporter):
    """Clients that send one byte a second, or a head and then nothing, hold no connection past the timeout."""
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 60 + b"\r\n\r\n"
    results = {}

    def loris(i):
        started = time.monotonic()
        data = exchange(exporter.port, [bytes([b]) for b in head], pause=1.0)
        results[i] = (time.monotonic() - started, data)

    def silent(i):
        started = time.monotonic()
        data = exchange(exporter.port, [b"GET /metrics HTTP/1.1\r\n"])
        results[i] = (time.monotonic() - started, data)

    threads = [threading.Thread(target=loris, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=silent, args=(i,)) for i in range(4, 8)]
    for t in threads:
        t.start()
    served = 0
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while time.monotonic() < deadline:
        assert metrics_ok(exporter.port)
        served += 1
        time.sleep(0.25)
    for t in threads:
        t.join(REQUEST_TIMEOUT_S + 20)
    assert served >= 10
    assert len(results) == 8
    for i, (elapsed, data) in sorted(results.items()):
        assert REQUEST_TIMEOUT_S - 1 <= elapsed <= REQUEST_TIMEOUT_S + 5, (i, elapsed)
        [(status, _, body)] = parse_responses(data)
        assert status == 408, (i, status, body)
    assert metrics_ok(exporter.port)
    assert exporter.alive()


@pytest.mark.timeout_s(60)
def test_many_connections_at_once(exporter):
    """More connections than the exporter takes at once: the extra wait, none is lost, the server recovers."""
    held = [socket.create_connection(("127.0.0.1", exporter.port), timeout=5) for _ in range(80)]
    try:
        time.sleep(0.3)
        # Those past the limit wait in the backlog; closing some lets them in.
        for s in held[:40]:
            s.close()
        ok = run_cases(exporter.port, [Case("GET %d" % i, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", {200})
                                       for i in range(40)], workers=8)
        assert ok == {200: 40}
    finally:
        for s in held:
            s.close()
    assert metrics_ok(exporter.port)
    assert exporter.alive()
