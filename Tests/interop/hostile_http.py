"""Hostile HTTP for any QuireHTTP server (libmicrohttpd): raw-socket exchanges, a strict parser of
what comes back, and generators of malformed request lines, methods, targets, versions, headers,
bodies, garbage and pipelining, parameterised by a `Target` (the path that exists, the answers
a plain request to it gets, the body limit). test_http_hostile.py runs them against the exporter,
test_gateway_hostile.py against the gateway (whose answers must also be the imitated API's typed
errors: `Target.check`).
"""

import random
import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor

ERRORS = {400, 404, 405, 408, 413, 414, 431, 501, 505}
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) [^\r\n]*\r\n")


class Target:
    """What the generators aim at and what they expect of it.

    path         a path the server has (bytes)
    get          the status of a plain `GET path` (the exporter's /metrics: 200; the gateway's POST-only routes: 405)
    post         the status of `POST path` with a body that is not what the route takes (405 or 400)
    max_body     the server's body limit in bytes (413 past it)
    timeout_s    the server's request timeout (a request not in by then is cut off, with 408)
    check        check(status, headers, body, path): raises unless the answer is the typed body the
                 server owes for `path`; None: the status alone is checked
    """

    def __init__(self, path, get, post, max_body, timeout_s, check=None):
        self.path, self.get, self.post = path, get, post
        self.max_body, self.timeout_s, self.check = max_body, timeout_s, check


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


def exchange(port, pieces, pause=0.0, half_close=False, timeout=18):
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


class Case:
    def __init__(self, name, data, expect=ERRORS, pieces=None, pause=0.0, half_close=False, silent_ok=False, sequence=None,
                 then_errors=False, heads=(), path=None, check=None):
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
        # The path the request addressed (whose API's error shape is owed), and a check of each answer.
        self.path = path
        self.body_check = check

    def check(self, port, timeout=18):
        data = exchange(port, self.pieces, self.pause, self.half_close, timeout=timeout)
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
        if self.body_check is not None:
            for i, (status, headers, body) in enumerate(responses):
                if i not in self.heads:
                    self.body_check(status, headers, body, self.path)
        return statuses[0]


def request(line, headers=(b"Host: x",), body=b""):
    return line + b"\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def _case(t, *args, **kwargs):
    """A Case aimed at `t`, its answers checked by `t.check`."""
    kwargs.setdefault("path", t.path.decode("latin-1"))
    kwargs.setdefault("check", t.check)
    return Case(*args, **kwargs)


def malformed_lines(t):
    P = t.path
    lines = [b"GARBAGE", b"GET", b"GET " + P, P + b" HTTP/1.1", b"GET " + P + b" HTTP/1.1 extra",
             b"GET\t" + P + b"\tHTTP/1.1", b"GET " + P + b" HTTP/", b"GET " + P + b" HTTP", b"GET " + P + b" HTTP/1.1.1",
             b"GET " + P + b" XTTP/1.1", b"GET " + P + b" HTTP/a.b", b" GET " + P + b" HTTP/1.1", b"GET /me trics HTTP/1.1",
             b"GET metrics HTTP/1.1", b"GET ../metrics HTTP/1.1", b"GET ?x HTTP/1.1", b"GET # HTTP/1.1", b"\x7f\x7f\x7f",
             b"GET " + P + b" HTTP/1.1\x00", b"G\x00ET " + P + b" HTTP/1.1", b":::", b"HTTP/1.1 200 OK", b"GET " + P + b" \r",
             b"-", b"GET " + P + b" HTTP/1.1\rHost: x", b"\xff\xfe\xfd " + P + b" HTTP/1.1", b"GET \xff\xfe HTTP/1.1"]
    cases = [_case(t, "line %r" % l, request(l, headers=())) for l in lines]
    cases += [_case(t, "line+host %r" % l, request(l)) for l in lines[:12]]
    return cases


def methods(t):
    P = t.path
    cases = []
    for m in [b"get", b"Get", b"gEt", b"G3T", b"GE-T_", b"G@T", b"G(T", b"GET,", b"\"GET\"", b"M" * 1000, b"G" * 9000]:
        cases.append(_case(t, "method %r" % m[:20], request(m + b" " + P + b" HTTP/1.1"), {400, 405, 431}))
    for m in [b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"PROPFIND", b"BREW", b"M-SEARCH", b"X"]:
        cases.append(_case(t, "method %s %s" % (m.decode(), P.decode()), request(m + b" " + P + b" HTTP/1.1", body=b""),
                           {t.post} if m == b"POST" else {405}))
        cases.append(_case(t, "method %s /nope" % m.decode(), request(m + b" /nope HTTP/1.1"), {404}, path="/nope"))
    cases.append(_case(t, "CONNECT", request(b"CONNECT 127.0.0.1:443 HTTP/1.1"), {400}))
    cases.append(_case(t, "OPTIONS *", request(b"OPTIONS * HTTP/1.1"), {404}, path="*"))
    return cases


def targets(t):
    P = t.path
    paths = [b"/nope", b"/" + P, P + b"/", P + b"/..", P + b"/../etc/passwd", b"/%00", b"/%zz",
             P + b"%", P + b"?%", P + b"?a=%zz&b", b"/" + "ü".encode() * 50, b"/?" + b"a=b&" * 1000,
             b"http://x" + P, b"https://x:443" + P, b"*", P + b"#frag", b"/\x01\x02", b"/" + b"a" * 16500,
             b"/" + b"a" * 70000, P + b"?" + b"q" * 20000]
    return [_case(t, "target %r" % p[:30], request(b"GET " + p + b" HTTP/1.1"), ERRORS | {t.get}, path=p.decode("latin-1"))
            for p in paths]


def versions(t):
    P, ok = t.path, t.get
    cases = []
    for v, expect in [(b"HTTP/1.0", {ok}), (b"HTTP/1.1", {ok}), (b"HTTP/1.2", {ok, 400, 505}), (b"HTTP/1.9", {ok, 400, 505}),
                      (b"HTTP/2.0", {400, 505}), (b"HTTP/2", {400, 505}), (b"HTTP/3.0", {400, 505}), (b"HTTP/0.9", {400, 505}),
                      (b"http/1.1", {400, 505}), (b"HTTP/01.1", {400, 505}), (b"HTTP/1.10", {ok, 400, 505}),
                      (b"HTTP/9.9", {400, 505}), (b"HTTPS/1.1", {400, 505}), (b"HTTP/1.1x", {400, 505})]:
        cases.append(_case(t, "version %r" % v, request(b"GET " + P + b" " + v, headers=(b"Host: x", b"Connection: close")), expect))
    cases.append(_case(t, "HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {400, 505}))
    return cases


def headers(t):
    P, ok, post = t.path, t.get, t.post
    GET, POST, PUT = b"GET " + P + b" HTTP/1.1", b"POST " + P + b" HTTP/1.1", b"PUT " + P + b" HTTP/1.1"
    big = b"a" * 20000
    cases = [
        _case(t, "one 20 KB header", request(GET, (b"Host: x", b"X-Big: " + big)), {431}),
        _case(t, "one 100 KB header", request(GET, (b"Host: x", b"X-Big: " + b"b" * 100000)), {431}),
        _case(t, "3000 small headers", request(GET, [b"X-%d: v" % i for i in range(3000)]), {431}),
        _case(t, "very long header name", request(GET, (b"Host: x", b"X" * 17000 + b": v")), {431}),
        _case(t, "header without colon", request(GET, (b"Host: x", b"nocolon")), {400}),
        _case(t, "space before colon", request(GET, (b"Host : x",)), {ok, 400}),
        _case(t, "obs-fold", request(GET, (b"Host: x", b"X-A: a", b" folded")), {ok, 400}),
        _case(t, "empty name", request(GET, (b"Host: x", b": v")), {ok, 400}),
        _case(t, "NUL in value", request(GET, (b"Host: x", b"X-A: a\x00b")), {ok, 400}),
        _case(t, "CR in value", request(GET, (b"Host: x", b"X-A: a\rb")), {ok, 400}),
        _case(t, "bare LF lines", b"GET " + P + b" HTTP/1.1\nHost: x\nConnection: close\n\n", {ok}),
        _case(t, "two Content-Lengths", request(POST, (b"Host: x", b"Content-Length: 3", b"Content-Length: 5"), b"abcde"), {400, post}),
        _case(t, "Content-Length and chunked", request(POST, (b"Host: x", b"Content-Length: 3", b"Transfer-Encoding: chunked"), b"0\r\n\r\n"),
              {400, post}),
        _case(t, "unknown Transfer-Encoding", request(POST, (b"Host: x", b"Transfer-Encoding: gzip")), {400, post, 408, 501}),
        _case(t, "Content-Length abc", request(POST, (b"Host: x", b"Content-Length: abc")), {400}),
        _case(t, "Content-Length -1", request(POST, (b"Host: x", b"Content-Length: -1")), {400}),
        _case(t, "Content-Length 2^64", request(POST, (b"Host: x", b"Content-Length: 18446744073709551616")), {400, 413}),
        _case(t, "Content-Length 1e9", request(POST, (b"Host: x", b"Content-Length: 1000000000")), {413}),
        _case(t, "Expect 100-continue, too large", request(PUT, (b"Host: x", b"Expect: 100-continue", b"Content-Length: %d" % (t.max_body + 1))),
              {413}),
        _case(t, "Expect: nonsense", request(GET, (b"Host: x", b"Expect: nonsense", b"Connection: close")), {ok, 417}),
        _case(t, "Connection: nonsense", request(GET, (b"Host: x", b"Connection: nonsense, close")), {ok}),
        _case(t, "no Host on 1.1", request(GET, (b"Connection: close",)), {ok, 400}),
        _case(t, "many Hosts", request(GET, (b"Host: a", b"Host: b", b"Connection: close")), {ok, 400}),
        _case(t, "binary header block", request(GET, (bytes(range(1, 9)) + b": " + bytes(range(14, 31)),)), {ok, 400}),
    ]
    for n in (100, 1000, 5000, 15000, 16500, 40000, 63000, 64000, 66000):
        cases.append(_case(t, "header of %d bytes" % n, request(GET, (b"Host: x", b"X-Pad: " + b"p" * n, b"Connection: close")),
                           {ok} if n < 16000 else {431}))
    return cases


def bodies(t):
    P, post = t.path, t.post
    POST = b"POST " + P + b" HTTP/1.1"
    over = t.max_body + 4096
    chunk = b"x" * 65536 if over > 1 << 20 else b"x" * 4096
    return [
        _case(t, "POST with a body", request(POST, (b"Host: x", b"Content-Length: 5"), b"hello"), {post}),
        _case(t, "body over the limit", request(POST, (b"Host: x", b"Content-Length: %d" % over), b"z" * over), {413}),
        _case(t, "chunked over the limit", None, {413}, pieces=[request(POST, (b"Host: x", b"Transfer-Encoding: chunked"))]
              + [b"%x\r\n" % len(chunk) + chunk + b"\r\n"] * (over // len(chunk) + 1) + [b"0\r\n\r\n"]),
        _case(t, "chunked, bad size", request(POST, (b"Host: x", b"Transfer-Encoding: chunked"), b"zz\r\nabc\r\n"), {400}),
        _case(t, "chunked, size too big", request(POST, (b"Host: x", b"Transfer-Encoding: chunked"), b"ffffffffffffffffff\r\n"), {400, 413}),
        _case(t, "chunked, missing CRLF", request(POST, (b"Host: x", b"Transfer-Encoding: chunked"), b"3\r\nabcXYZ"), {400, post, 408}),
        _case(t, "chunked, fine", request(POST, (b"Host: x", b"Transfer-Encoding: chunked"), b"3\r\nabc\r\n0\r\n\r\n"), {post}),
        # Cut short, client half-closes: the server may answer or just close, but must not hang.
        _case(t, "truncated body, half-closed", request(POST, (b"Host: x", b"Content-Length: 100"), b"0123456789"),
              {400, post, 408}, half_close=True, silent_ok=True),
        _case(t, "truncated head, half-closed", b"GET " + P + b" HTTP/1.1\r\nHost: x\r\n", {400, 408}, half_close=True, silent_ok=True),
        _case(t, "truncated line, half-closed", b"GET /metr", {400, 408}, half_close=True, silent_ok=True),
        _case(t, "truncated chunked, half-closed", request(POST, (b"Host: x", b"Transfer-Encoding: chunked"), b"5\r\nab"),
              {400, post, 408}, half_close=True, silent_ok=True),
        # Cut short, client waits: the request timeout answers.
        _case(t, "truncated body, waiting", request(POST, (b"Host: x", b"Content-Length: 100"), b"0123456789"), {408}),
        _case(t, "truncated head, waiting", b"GET " + P + b" HTTP/1.1\r\nHost: x\r\n", {408}),
        _case(t, "only blank lines", b"\r\n\r\n\r\n", {400, 408}),
    ]


def garbage(t, n=120):
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
            data = b"GET " + t.path + b" HTTP/1.1\r\n" + data.replace(b"\r\n\r\n", b"") + b"\r\n\r\n"
            cases.append(_case(t, "garbage header %d (%d bytes)" % (i, len(data)), data, ERRORS | {t.get}))
            continue
        cases.append(_case(t, "garbage %d (%d bytes)" % (i, len(data)), data, ERRORS))
    cases.append(_case(t, "TLS ClientHello", bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00" * 40 + b"\r\n\r\n", ERRORS))
    cases.append(_case(t, "SSH banner", b"SSH-2.0-OpenSSH_9.2\r\n\r\n", ERRORS))
    cases.append(_case(t, "SMTP", b"EHLO example.org\r\n\r\n", ERRORS))
    cases.append(_case(t, "NULs", b"\x00" * 64 + b"\r\n\r\n", ERRORS))
    return cases


def pipelining(t):
    P, ok = t.path, t.get
    get = b"GET " + P + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    last = b"GET " + P + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    return [
        _case(t, "3 pipelined GETs", get * 2 + last, sequence=[ok] * 3),
        _case(t, "20 pipelined GETs", get * 19 + last, sequence=[ok] * 20),
        _case(t, "GET then garbage", get + b"GARBAGE\r\n\r\n", sequence=[ok], then_errors=True),
        _case(t, "GET then a bad method", get + b"get / HTTP/1.1\r\nHost: x\r\n\r\n", sequence=[ok, 400]),
        _case(t, "GET then 404 then 405 then GET", get + b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
              + b"PUT " + P + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" + last, sequence=[ok, 404, 405, ok]),
        _case(t, "HEAD then GET", b"HEAD " + P + b" HTTP/1.1\r\nHost: x\r\n\r\n" + last, sequence=[ok, ok], heads=(0,)),
        _case(t, "pipelined in pieces", None, pieces=[get[:10], get[10:] + get[:5], get[5:] + last], pause=0.05, sequence=[ok] * 3),
        _case(t, "GET then a huge head", get + b"GET " + P + b" HTTP/1.1\r\nX: " + b"h" * 20000 + b"\r\n\r\n", sequence=[ok, 431]),
        _case(t, "GET then too large a body", get + b"POST " + P + b" HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (t.max_body + 1),
              sequence=[ok, 413]),
    ]


def run_cases(port, cases, workers=16, timeout=18):
    """Runs every case (in parallel); fails with every failure listed; returns {status: count}."""
    failures = []
    statuses = {}

    def one(case):
        try:
            status = case.check(port, timeout=timeout)
            statuses[status] = statuses.get(status, 0) + 1
        except Exception as e:  # collected, reported together
            failures.append("%s: %s" % (case.name, e))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, cases))
    assert not failures, "%d of %d cases failed:\n" % (len(failures), len(cases)) + "\n".join(failures[:40])
    return statuses
