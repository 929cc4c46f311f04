"""Hostile HTTP against `quire exporter` (libmicrohttpd through QuireHTTP, the gateway's server too).

A few hundred raw-socket cases: malformed request lines, bad methods and targets, other HTTP
versions, huge and broken headers, bodies over the limit or cut short, garbage bytes, pipelining and
clients that send one byte a second. Each must get a well-formed HTTP/1.1 answer with the expected
status (or, where the client gave up first, no answer), and the exporter must keep serving /metrics
throughout: nothing a client sends can crash or hang it.
"""

import random
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Proc, free_port, wait_until

# The exporter's request timeout (not a flag): a request not in after this is cut off.
REQUEST_TIMEOUT_S = 10
ERRORS = {400, 404, 405, 408, 413, 414, 431, 501, 505}
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) [^\r\n]*\r\n")


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
    wait_until(lambda: e.alive() and _accepts(e.port), 10, what="the exporter to listen")
    return e


def _accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def parse_responses(data, heads=()):
    """Splits what came back into (status, headers, body) triples; raises on anything malformed.
    `heads`: the indexes of answers to HEAD requests (a length, but no body)."""
    responses = []
    rest = data
    while rest:
        m = STATUS_LINE.match(rest)
        assert m, "not a status line: %r" % rest[:200]
        end = rest.find(b"\r\n\r\n")
        assert end >= 0, "head never ends: %r" % rest[:200]
        headers = {}
        for line in rest[m.end():end].split(b"\r\n"):
            if not line:
                continue
            name, sep, value = line.partition(b":")
            assert sep and name and name.strip() == name, "bad header line %r" % line
            headers[name.decode("latin-1").lower()] = value.strip().decode("latin-1")
        assert "content-length" in headers, "no Content-Length: %r" % rest[:end]
        length = 0 if len(responses) in heads else int(headers["content-length"])
        body = rest[end + 4:end + 4 + length]
        status = int(m.group(1))
        responses.append((status, headers, body))
        rest = rest[end + 4 + length:]
        if headers.get("connection", "").lower() == "close":
            break
    return responses


def exchange(port, pieces, pause=0.0, half_close=False, timeout=REQUEST_TIMEOUT_S + 8):
    """Sends `pieces` (pausing between them), reads until the server closes; returns the bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        for piece in pieces:
            try:
                s.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            if pause:
                time.sleep(pause)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            except socket.timeout:
                raise AssertionError("no answer and no close within %.0fs" % timeout)
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    return out


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


class Case:
    def __init__(self, name, data, expect=ERRORS, pieces=None, pause=0.0, half_close=False, silent_ok=False, sequence=None,
                 then_errors=False, heads=()):
        self.name = name
        self.heads = heads
        self.pieces = pieces if pieces is not None else [data]
        self.expect = expect
        self.pause = pause
        self.half_close = half_close
        # The client gave up (half-closed mid-request): no answer is an answer.
        self.silent_ok = silent_ok
        # Pipelined: exactly these answers in order; with then_errors, these first and then only errors
        # (or nothing: a broken request after a kept-alive one may just close the connection).
        self.sequence = sequence
        self.then_errors = then_errors

    def check(self, port):
        data = exchange(port, self.pieces, self.pause, self.half_close)
        if not data:
            assert self.silent_ok, "%s: closed without an answer" % self.name
            return None
        responses = parse_responses(data, self.heads)
        assert responses, self.name
        statuses = [r[0] for r in responses]
        if self.sequence is None:
            assert len(statuses) == 1, "%s: %s" % (self.name, statuses)
            assert statuses[0] in self.expect, "%s: %s not in %s" % (self.name, statuses[0], sorted(self.expect))
        elif self.then_errors:
            n = len(self.sequence)
            assert statuses[:n] == self.sequence and all(s in ERRORS for s in statuses[n:]), (self.name, statuses)
        else:
            assert statuses == self.sequence, (self.name, statuses)
        return statuses[0]


def request(line, headers=(b"Host: x",), body=b""):
    return line + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def malformed_lines():
    lines = [b"GARBAGE", b"GET", b"GET /metrics", b"/metrics HTTP/1.1", b"GET /metrics HTTP/1.1 extra",
             b"GET\t/metrics\tHTTP/1.1", b"GET /metrics HTTP/", b"GET /metrics HTTP", b"GET /metrics HTTP/1.1.1",
             b"GET /metrics XTTP/1.1", b"GET /metrics HTTP/a.b", b" GET /metrics HTTP/1.1", b"GET /me trics HTTP/1.1",
             b"GET metrics HTTP/1.1", b"GET ../metrics HTTP/1.1", b"GET ?x HTTP/1.1", b"GET # HTTP/1.1", b"\x7f\x7f\x7f",
             b"GET /metrics HTTP/1.1\x00", b"G\x00ET /metrics HTTP/1.1", b":::", b"HTTP/1.1 200 OK", b"GET /metrics \r",
             b"-", b"GET /metrics HTTP/1.1\rHost: x", b"\xff\xfe\xfd /metrics HTTP/1.1", b"GET \xff\xfe HTTP/1.1"]
    cases = [Case("line %r" % l, request(l, headers=())) for l in lines]
    cases += [Case("line+host %r" % l, request(l)) for l in lines[:12]]
    return cases


def methods():
    cases = []
    for m in [b"get", b"Get", b"gEt", b"G3T", b"GE-T_", b"G@T", b"G(T", b"GET,", b"\"GET\"", b"M" * 1000, b"G" * 9000]:
        cases.append(Case("method %r" % m[:20], request(m + b" /metrics HTTP/1.1"), {400, 405, 431}))
    for m in [b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"PROPFIND", b"BREW", b"M-SEARCH", b"X"]:
        cases.append(Case("method %s /metrics" % m.decode(), request(m + b" /metrics HTTP/1.1", body=b""), {405}))
        cases.append(Case("method %s /nope" % m.decode(), request(m + b" /nope HTTP/1.1"), {404}))
    cases.append(Case("CONNECT", request(b"CONNECT 127.0.0.1:443 HTTP/1.1"), {400}))
    cases.append(Case("OPTIONS *", request(b"OPTIONS * HTTP/1.1"), {404}))
    return cases


def targets():
    paths = [b"/nope", b"//metrics", b"/metrics/", b"/metrics/..", b"/metrics/../etc/passwd", b"/%00", b"/%zz",
             b"/metrics%", b"/metrics?%", b"/metrics?a=%zz&b", b"/" + "ü".encode() * 50, b"/?" + b"a=b&" * 1000,
             b"http://x/metrics", b"https://x:443/metrics", b"*", b"/metrics#frag", b"/\x01\x02", b"/" + b"a" * 16500,
             b"/" + b"a" * 70000, b"/metrics?" + b"q" * 20000]
    cases = []
    for p in paths:
        cases.append(Case("target %r" % p[:30], request(b"GET " + p + b" HTTP/1.1"), ERRORS | {200}))
    return cases


def versions():
    cases = []
    for v, expect in [(b"HTTP/1.0", {200}), (b"HTTP/1.1", {200}), (b"HTTP/1.2", {200, 400, 505}), (b"HTTP/1.9", {200, 400, 505}),
                      (b"HTTP/2.0", {400, 505}), (b"HTTP/2", {400, 505}), (b"HTTP/3.0", {400, 505}), (b"HTTP/0.9", {400, 505}),
                      (b"http/1.1", {400, 505}), (b"HTTP/01.1", {400, 505}), (b"HTTP/1.10", {200, 400, 505}),
                      (b"HTTP/9.9", {400, 505}), (b"HTTPS/1.1", {400, 505}), (b"HTTP/1.1x", {400, 505})]:
        cases.append(Case("version %r" % v, request(b"GET /metrics " + v, headers=(b"Host: x", b"Connection: close")), expect))
    cases.append(Case("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {400, 505}))
    return cases


def headers():
    big = b"a" * 20000
    cases = [
        Case("one 20 KB header", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-Big: " + big)), {431}),
        Case("one 100 KB header", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-Big: " + b"b" * 100000)), {431}),
        Case("3000 small headers", request(b"GET /metrics HTTP/1.1", [b"X-%d: v" % i for i in range(3000)]), {431}),
        Case("very long header name", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X" * 17000 + b": v")), {431}),
        Case("header without colon", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"nocolon")), {400}),
        Case("space before colon", request(b"GET /metrics HTTP/1.1", (b"Host : x",)), {200, 400}),
        Case("obs-fold", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-A: a", b" folded")), {200, 400}),
        Case("empty name", request(b"GET /metrics HTTP/1.1", (b"Host: x", b": v")), {200, 400}),
        Case("NUL in value", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-A: a\x00b")), {200, 400}),
        Case("CR in value", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-A: a\rb")), {200, 400}),
        Case("bare LF lines", b"GET /metrics HTTP/1.1\nHost: x\nConnection: close\n\n", {200}),
        Case("two Content-Lengths", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 3", b"Content-Length: 5"), b"abcde"),
             {400, 405}),
        Case("Content-Length and chunked", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 3",
                                                                              b"Transfer-Encoding: chunked"), b"0\r\n\r\n"), {400, 405}),
        Case("unknown Transfer-Encoding", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: gzip")), {400, 405, 408, 501}),
        Case("Content-Length abc", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: abc")), {400}),
        Case("Content-Length -1", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: -1")), {400}),
        Case("Content-Length 2^64", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 18446744073709551616")), {400, 413}),
        Case("Content-Length 1e9", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 1000000000")), {413}),
        Case("Expect 100-continue, too large", request(b"PUT /metrics HTTP/1.1", (b"Host: x", b"Expect: 100-continue",
                                                                                 b"Content-Length: 99999999")), {413}),
        Case("Expect: nonsense", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"Expect: nonsense", b"Connection: close")), {200, 417}),
        Case("Connection: nonsense", request(b"GET /metrics HTTP/1.1", (b"Host: x", b"Connection: nonsense, close")), {200}),
        Case("no Host on 1.1", request(b"GET /metrics HTTP/1.1", (b"Connection: close",)), {200, 400}),
        Case("many Hosts", request(b"GET /metrics HTTP/1.1", (b"Host: a", b"Host: b", b"Connection: close")), {200, 400}),
        Case("binary header block", request(b"GET /metrics HTTP/1.1", (bytes(range(1, 9)) + b": " + bytes(range(14, 31)),)),
             {200, 400}),
    ]
    for n in (100, 1000, 5000, 15000, 16500, 40000, 63000, 64000, 66000):
        cases.append(Case("header of %d bytes" % n, request(b"GET /metrics HTTP/1.1", (b"Host: x", b"X-Pad: " + b"p" * n,
                                                                                      b"Connection: close")),
                          {200} if n < 16000 else {431}))
    return cases


def bodies():
    chunk = b"x" * 4096
    cases = [
        Case("POST /metrics with a body", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 5"), b"hello"), {405}),
        Case("body over 16 KiB", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 20000"), b"z" * 20000), {413}),
        Case("chunked over 16 KiB", None, {413}, pieces=[request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"))]
             + [b"1000\r\n" + chunk + b"\r\n"] * 6 + [b"0\r\n\r\n"]),
        Case("chunked, bad size", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"), b"zz\r\nabc\r\n"), {400}),
        Case("chunked, size too big", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"),
                                              b"ffffffffffffffffff\r\n"), {400, 413}),
        Case("chunked, missing CRLF", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"),
                                              b"3\r\nabcXYZ"), {400, 405, 408}),
        Case("chunked, fine, 405", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"),
                                           b"3\r\nabc\r\n0\r\n\r\n"), {405}),
        # Cut short, client half-closes: the server may answer or just close, but must not hang.
        Case("truncated body, half-closed", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 100"), b"0123456789"),
             {400, 405, 408}, half_close=True, silent_ok=True),
        Case("truncated head, half-closed", b"GET /metrics HTTP/1.1\r\nHost: x\r\n", {400, 408}, half_close=True, silent_ok=True),
        Case("truncated line, half-closed", b"GET /metr", {400, 408}, half_close=True, silent_ok=True),
        Case("truncated chunked, half-closed", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Transfer-Encoding: chunked"), b"5\r\nab"),
             {400, 405, 408}, half_close=True, silent_ok=True),
        # Cut short, client waits: the request timeout answers.
        Case("truncated body, waiting", request(b"POST /metrics HTTP/1.1", (b"Host: x", b"Content-Length: 100"), b"0123456789"), {408}),
        Case("truncated head, waiting", b"GET /metrics HTTP/1.1\r\nHost: x\r\n", {408}),
        Case("only blank lines", b"\r\n\r\n\r\n", {400, 408}),
    ]
    return cases


def garbage(n=120):
    rng = random.Random(12)
    cases = []
    for i in range(n):
        size = rng.choice([1, 2, 7, 50, 300, 2000, 20000])
        data = bytes(rng.getrandbits(8) for _ in range(size))
        if i % 3 == 0:
            data += b"\r\n\r\n"
        elif i % 3 == 1:
            data = data.replace(b"\r", b"").replace(b"\n", b"") + b"\r\n\r\n"
        else:
            # Garbage header fields: libmicrohttpd is lenient with bytes in names and values, so a
            # field with a colon somewhere may well be served.
            data = b"GET /metrics HTTP/1.1\r\n" + data.replace(b"\r\n\r\n", b"") + b"\r\n\r\n"
            cases.append(Case("garbage header %d (%d bytes)" % (i, len(data)), data, ERRORS | {200}))
            continue
        cases.append(Case("garbage %d (%d bytes)" % (i, len(data)), data, ERRORS))
    cases.append(Case("TLS ClientHello", bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00" * 40 + b"\r\n\r\n", ERRORS))
    cases.append(Case("SSH banner", b"SSH-2.0-OpenSSH_9.2\r\n\r\n", ERRORS))
    cases.append(Case("SMTP", b"EHLO example.org\r\n\r\n", ERRORS))
    cases.append(Case("NULs", b"\x00" * 64 + b"\r\n\r\n", ERRORS))
    return cases


def pipelining():
    ok = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    last = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    return [
        Case("3 pipelined GETs", ok * 2 + last, sequence=[200] * 3),
        Case("20 pipelined GETs", ok * 19 + last, sequence=[200] * 20),
        Case("GET then garbage", ok + b"GARBAGE\r\n\r\n", sequence=[200], then_errors=True),
        Case("GET then a bad method", ok + b"get / HTTP/1.1\r\nHost: x\r\n\r\n", sequence=[200, 400]),
        Case("GET then 404 then 405 then GET", ok + b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
             + b"PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" + last, sequence=[200, 404, 405, 200]),
        Case("HEAD then GET", b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n" + last, sequence=[200, 200], heads=(0,)),
        Case("pipelined in pieces", None, pieces=[ok[:10], ok[10:] + ok[:5], ok[5:] + last], pause=0.05, sequence=[200] * 3),
        Case("GET then a huge head", ok + b"GET /metrics HTTP/1.1\r\nX: " + b"h" * 20000 + b"\r\n\r\n", sequence=[200, 431]),
        Case("GET then too large a body", ok + b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 999999\r\n\r\n",
             sequence=[200, 413]),
    ]


def run_cases(port, cases, workers=16):
    failures = []
    statuses = {}

    def one(case):
        try:
            status = case.check(port)
            statuses[status] = statuses.get(status, 0) + 1
        except Exception as e:  # collected, reported together
            failures.append("%s: %s" % (case.name, e))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, cases))
    assert not failures, "\n".join(failures[:40])
    return statuses


@pytest.mark.timeout_s(150)
def test_hostile_requests_get_well_formed_errors(exporter):
    groups = [malformed_lines(), methods(), targets(), versions(), headers(), bodies(), pipelining()]
    total = 0
    for cases in groups:
        run_cases(exporter.port, cases)
        total += len(cases)
        assert metrics_ok(exporter.port)
        assert exporter.alive()
    assert total >= 150


@pytest.mark.timeout_s(150)
def test_garbage_bytes(exporter):
    statuses = run_cases(exporter.port, garbage())
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
