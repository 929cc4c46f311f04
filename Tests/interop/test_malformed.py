"""Malformed peers: every bad client message gets exactly one schema-valid error
reply; protocol-breaking workers get DISCONNECT; the broker keeps serving."""

import random
import time

import pytest

from conftest import (
    C02_FINAL, C02_REQUEST, MDPC01, MDPC02, MDPW01, MDPW02, MT_FINAL, MT_REQUEST,
    RawWorker, ThreadedWorker, fmt, mmi, new_dealer, parse_error, recv, assert_silent,
    wait_service,
)

MAX_BYTES = 65536
N_MESSAGES = 1000
N_SOCKETS = 4

# Reply shapes. "undetermined" = header unknown: MDP/0.2 client shape, prefixed
# with an empty frame iff the request began with one.
MDP02, MDP01, MAJORTOMO, UNDETERMINED = "mdp02", "mdp01", "majortomo", "undetermined"

BOGUS_HEADERS = [b"MDPC03", b"MDPX02", b"mdpc02", b"MDPC0", b"MDPC022", b"MDPC02 ", b"\x00",
                 b"HTTP/1.1", b"GET / HTTP/1.1\r\n", b"\xff\xfe\xfd", b"MDPA01", b"xMDPC02", b"x" * 300]
BAD_UTF8 = [b"\xff", b"ech\xc3", b"\xc0\x80", b"\xed\xa0\x80", b"\x80abc", b"ok\xf8\x88\x80\x80\x80"]


def _too_big(rng):
    # above the limit, below twice it
    return b"z" * rng.randint(MAX_BYTES + 1, MAX_BYTES + MAX_BYTES // 2)


def make_cases(rng):
    """Return a list of (kind, frames, expected_code, shape, allowed_service_frames)."""
    gens = []

    # --- wrong header -------------------------------------------------------
    def wrong_header():
        h = rng.choice(BOGUS_HEADERS)
        frames = [h, C02_REQUEST, b"echo", b"body"]
        return "wrong-header", frames, "bad_request", UNDETERMINED, None
    gens.append(wrong_header)

    def wrong_header_prefixed():
        h = rng.choice(BOGUS_HEADERS + [b""])
        frames = [b"", h, b"echo", b"body"]
        return "wrong-header-prefixed", frames, "bad_request", UNDETERMINED, None
    gens.append(wrong_header_prefixed)

    def lone_frame():
        frames = [rng.choice([b"", b"garbage", b"\x00\x01\x02", b"MDPC2"])]
        return "lone-frame", frames, "bad_request", UNDETERMINED, {b""}
    gens.append(lone_frame)

    # --- unknown / wrong command (MDP/0.2) ------------------------------------
    def bad_command02():
        # 0x02/0x03 are PARTIAL/FINAL: broker->client only. Others are undefined.
        cmd = rng.choice([b"\x00", b"\x02", b"\x03", b"\x04", b"\x05", b"\x06", b"\x07", b"\x7f", b"\xff",
                          b"", b"\x01\x01", b"01", b"REQUEST"])
        frames = [MDPC02, cmd, b"echo", b"body"]
        return "mdp02-bad-command", frames, "bad_request", MDP02, {b"", b"echo"}
    gens.append(bad_command02)

    def bad_command_majortomo():
        # 0x01 is deliberately excluded: [b"", MDPC02, 0x01, ...] is what an RFC 18
        # client on a REQ socket sends, and a broker may reasonably accept it.
        cmd = rng.choice([b"\x00", b"\x03", b"\x04", b"\x05", b"\x09", b"\xff", b"", b"\x02\x02"])
        frames = [b"", MDPC02, cmd, b"echo", b"body"]
        return "majortomo-bad-command", frames, "bad_request", MAJORTOMO, None
    gens.append(bad_command_majortomo)

    # --- too few frames -------------------------------------------------------
    def too_few():
        choice = rng.randrange(5)
        if choice == 0:
            return "too-few", [MDPC02], "bad_request", MDP02, {b""}
        if choice == 1:
            return "too-few", [MDPC02, C02_REQUEST], "bad_request", MDP02, {b""}
        if choice == 2:
            return "too-few", [b"", MDPC01], "bad_request", MDP01, {b""}
        if choice == 3:
            return "too-few", [b"", MDPC02], "bad_request", MAJORTOMO, None
        return "too-few", [b"", MDPC02, MT_REQUEST], "bad_request", MAJORTOMO, None
    gens.append(too_few)

    # --- empty service name ----------------------------------------------------
    def empty_service():
        d = rng.choice([MDP02, MDP01, MAJORTOMO])
        body = [b"body"] * rng.randint(0, 2)
        if d == MDP02:
            frames = [MDPC02, C02_REQUEST, b""] + body
        elif d == MDP01:
            frames = [b"", MDPC01, b""] + body
        else:
            frames = [b"", MDPC02, MT_REQUEST, b""] + body
        return "empty-service", frames, "bad_request", d, {b""}
    gens.append(empty_service)

    # --- service name not UTF-8 ------------------------------------------------
    def bad_utf8_service():
        d = rng.choice([MDP02, MDP01, MAJORTOMO])
        name = rng.choice(BAD_UTF8)
        if d == MDP02:
            frames = [MDPC02, C02_REQUEST, name, b"body"]
        elif d == MDP01:
            frames = [b"", MDPC01, name, b"body"]
        else:
            frames = [b"", MDPC02, MT_REQUEST, name, b"body"]
        # Ambiguous: the broker may echo the raw service frame or leave it empty.
        return "non-utf8-service", frames, "bad_request", d, {b"", name}
    gens.append(bad_utf8_service)

    # --- too large ---------------------------------------------------------------
    def too_large_frame():
        d = rng.choice([MDP02, MDP01, MAJORTOMO])
        body = [b"small", _too_big(rng)] if rng.random() < 0.5 else [_too_big(rng)]
        if d == MDP02:
            frames = [MDPC02, C02_REQUEST, b"echo"] + body
        elif d == MDP01:
            frames = [b"", MDPC01, b"echo"] + body
        else:
            frames = [b"", MDPC02, MT_REQUEST, b"echo"] + body
        return "too-large-frame", frames, "too_large", d, {b"echo"}
    gens.append(too_large_frame)

    def too_large_total():
        # Each frame under the limit, the message well over it. --max-message-bytes
        # is a *message* limit ("a frame or message over the configured limits").
        n = rng.randint(3, 5)
        body = [b"q" * (MAX_BYTES // 2 + 100) for _ in range(n)]
        frames = [MDPC02, C02_REQUEST, b"echo"] + body
        return "too-large-total", frames, "too_large", MDP02, {b"echo"}
    gens.append(too_large_total)

    weights = {
        wrong_header: 14, wrong_header_prefixed: 10, lone_frame: 6, bad_command02: 16,
        bad_command_majortomo: 10, too_few: 12, empty_service: 12, bad_utf8_service: 12,
        too_large_frame: 6, too_large_total: 2,
    }
    population = list(weights)
    cases = []
    # every generator at least a few times, then weighted random
    for g in population:
        for _ in range(3):
            cases.append(g())
    while len(cases) < N_MESSAGES:
        g = rng.choices(population, weights=[weights[p] for p in population])[0]
        cases.append(g())
    rng.shuffle(cases)
    return cases


def check_error_reply(case, reply):
    kind, frames, code, shape, services = case
    ctx = "\n  kind=%s\n  sent=%s\n  got =%s" % (kind, fmt(frames), fmt(reply))
    if shape == UNDETERMINED:
        prefix = [b""] if frames[0] == b"" else []
        n = len(prefix)
        assert len(reply) == n + 4 and reply[:n] == prefix and reply[n:n + 2] == [MDPC02, C02_FINAL], \
            "expected %s[MDPC02, 0x03, service-or-empty, json]%s" % ("[''] + " if prefix else "", ctx)
        svc = reply[n + 2]
        allowed = services if services is not None else {b""} | set(frames)
        assert svc in allowed, "service frame %r not in %r%s" % (svc, allowed, ctx)
        json_frame = reply[n + 3]
    elif shape == MDP02:
        assert len(reply) == 4 and reply[:2] == [MDPC02, C02_FINAL], "expected [MDPC02, 0x03, svc, json]" + ctx
        assert reply[2] in services, "service frame %r not in %r%s" % (reply[2], services, ctx)
        json_frame = reply[3]
    elif shape == MDP01:
        assert len(reply) == 4 and reply[:2] == [b"", MDPC01], "expected ['', MDPC01, svc, json]" + ctx
        assert reply[2] in services, "service frame %r not in %r%s" % (reply[2], services, ctx)
        json_frame = reply[3]
    elif shape == MAJORTOMO:
        assert len(reply) == 4 and reply[:3] == [b"", MDPC02, MT_FINAL], "expected ['', MDPC02, 0x04, json]" + ctx
        json_frame = reply[3]
    else:
        raise ValueError(shape)
    err = parse_error(json_frame, code, ctx)
    if code == "too_large" and "limit" in err:
        assert err["limit"] == MAX_BYTES, "too_large limit %r != %d%s" % (err["limit"], MAX_BYTES, ctx)
    return err


def test_thousand_malformed_client_messages(ctx, start_broker, start_echo_worker):
    broker = start_broker(max_message_bytes=MAX_BYTES)
    start_echo_worker(broker)
    rng = random.Random(0x51EE)
    cases = make_cases(rng)
    socks = [new_dealer(ctx, broker.url) for _ in range(N_SOCKETS)]

    failures = []
    seen = {}
    previous = {}
    t0 = time.monotonic()
    for i, case in enumerate(cases):
        s = socks[i % N_SOCKETS]
        s.send_multipart(case[1])
        try:
            reply = recv(s, timeout=3.0, what="error reply to %s %s" % (case[0], fmt(case[1])))
            check_error_reply(case, reply)
            seen[case[0]] = seen.get(case[0], 0) + 1
        except AssertionError as exc:
            prev = previous.get(i % N_SOCKETS)
            failures.append("#%d: %s\n  (previous message on this socket: %s %s)" % (
                i, exc, prev[0] if prev else None, fmt(prev[1]) if prev else ""))
            if len(failures) >= 15:
                break
            # resync: drop anything left on this socket so later cases are judged on their own
            while s.poll(200):
                s.recv_multipart()
        previous[i % N_SOCKETS] = case
    assert not failures, "%d malformed messages mishandled (first shown):\n%s" % (
        len(failures), "\n".join(failures))
    assert sum(seen.values()) == N_MESSAGES
    for i, s in enumerate(socks):
        assert_silent(s, 0.3, "malformed-client socket %d (a message got two replies)" % i)
    # the broker (and every one of these clients) still works
    for i, s in enumerate(socks):
        s.send_multipart([MDPC02, C02_REQUEST, b"echo", b"still", b"alive-%d" % i])
        assert recv(s) == [MDPC02, C02_FINAL, b"echo", b"still", b"alive-%d" % i]
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("size", [MAX_BYTES - 1024, MAX_BYTES // 2])
def test_request_under_limit_is_served(ctx, start_broker, start_echo_worker, size):
    broker = start_broker(max_message_bytes=MAX_BYTES)
    start_echo_worker(broker)
    s = new_dealer(ctx, broker.url)
    body = [b"a" * size]
    s.send_multipart([MDPC02, C02_REQUEST, b"echo"] + body)
    assert recv(s) == [MDPC02, C02_FINAL, b"echo"] + body


def test_mdp01_error_reply_exact_shape(ctx, broker, echo_worker):
    s = new_dealer(ctx, broker.url)
    s.send_multipart([b"", MDPC01, b""])
    reply = recv(s)
    assert len(reply) == 4 and reply[:3] == [b"", MDPC01, b""], fmt(reply)
    err = parse_error(reply[3], "bad_request")
    assert err["retryable"] is False, err


# ---------------------------------------------------------------------------
# Bad workers
# ---------------------------------------------------------------------------

def _bad_worker_scripts():
    """(id, dialect, script) where script(worker, service) performs the violation."""
    def unknown_cmd(cmd):
        def run(w, svc):
            w.ready(svc)
            w.send_raw(w.prefix + [w.header, cmd])
        return run

    def heartbeat_before_ready(w, svc):
        w.heartbeat()

    def final_before_ready(w, svc):
        w.final(b"\x00\x01\x02\x03\x04", b"nobody asked")

    def final_without_request(w, svc):
        w.ready(svc)
        w.final(b"\x00kx\x9a\x1d", b"nobody asked")

    def partial_without_request(w, svc):
        w.ready(svc)
        w.partial(b"\x00kx\x9a\x1d", b"nobody asked")

    def ready_twice(w, svc):
        w.ready(svc)
        w.ready(svc)

    def ready_without_service(w, svc):
        # Not spelled out in the brief: a READY with no service frame breaks the
        # envelope, so a ZeroMQ user would expect DISCONNECT.
        w.send_raw(w.prefix + [w.header, w.cmds["READY"]])

    def empty_command(w, svc):
        w.ready(svc)
        w.send_raw(w.prefix + [w.header, b""])

    def client_command_from_worker(w, svc):
        w.ready(svc)
        w.send_raw(w.prefix + [w.header, b"\x01\x02"])

    return [
        ("mdp02-unknown-0x09", "mdp02", unknown_cmd(b"\x09")),
        ("mdp02-unknown-0xff", "mdp02", unknown_cmd(b"\xff")),
        ("mdp02-unknown-0x00", "mdp02", unknown_cmd(b"\x00")),
        ("mdp02-request-cmd", "mdp02", unknown_cmd(b"\x02")),  # REQUEST is broker->worker only
        ("mdp02-heartbeat-before-ready", "mdp02", heartbeat_before_ready),
        ("mdp02-final-before-ready", "mdp02", final_before_ready),
        ("mdp02-final-without-request", "mdp02", final_without_request),
        ("mdp02-partial-without-request", "mdp02", partial_without_request),
        ("mdp02-ready-twice", "mdp02", ready_twice),
        ("mdp02-ready-without-service", "mdp02", ready_without_service),
        ("mdp02-empty-command", "mdp02", empty_command),
        ("mdp02-two-byte-command", "mdp02", client_command_from_worker),
        ("mdp01-unknown-0x09", "mdp01", unknown_cmd(b"\x09")),
        ("mdp01-partial-cmd-0x06", "mdp01", unknown_cmd(b"\x06")),
        ("mdp01-heartbeat-before-ready", "mdp01", heartbeat_before_ready),
        ("mdp01-reply-without-request", "mdp01", final_without_request),
        ("mdp01-ready-twice", "mdp01", ready_twice),
        ("majortomo-unknown-0x09", "majortomo", unknown_cmd(b"\x09")),
        ("majortomo-heartbeat-before-ready", "majortomo", heartbeat_before_ready),
        ("majortomo-final-without-request", "majortomo", final_without_request),
    ]


BAD_WORKERS = _bad_worker_scripts()


def test_bad_workers_get_disconnect(ctx, broker, echo_worker):
    """All violations against one broker (fast); each bad worker uses its own service."""
    failures = []
    for i, (name, dialect, script) in enumerate(BAD_WORKERS):
        svc = b"bad-%d" % i
        w = RawWorker(ctx, broker.url, dialect=dialect)
        try:
            script(w, svc)
            try:
                w.expect_disconnect()
            except AssertionError as exc:
                failures.append("%s (%s): %s" % (name, dialect, exc))
                continue
            # dropped: not registered under its service any more
            code = mmi(ctx, broker.url, svc)
            if code != [b"404"]:
                failures.append("%s: mmi.service after DISCONNECT = %r" % (name, code))
            # and the broker keeps serving others
            s = new_dealer(ctx, broker.url)
            s.send_multipart([MDPC02, C02_REQUEST, b"echo", name.encode()])
            got = recv(s)
            s.close(0)
            if got != [MDPC02, C02_FINAL, b"echo", name.encode()]:
                failures.append("%s: echo after bad worker returned %s" % (name, fmt(got)))
        finally:
            w.close()
    assert not failures, "bad workers mishandled:\n" + "\n".join(failures)


def test_disconnect_frames_exact(ctx, broker):
    for dialect, expected in [("mdp02", [MDPW02, b"\x06"]),
                              ("majortomo", [b"", MDPW02, b"\x06"]),
                              ("mdp01", [b"", MDPW01, b"\x05"])]:
        w = RawWorker(ctx, broker.url, dialect=dialect)
        w.ready(b"exact-" + dialect.encode())
        w.send_raw(w.prefix + [w.header, b"\x42"])
        deadline = time.monotonic() + 3
        while True:
            msg = recv(w.sock, max(deadline - time.monotonic(), 0.01), "DISCONNECT for %s worker" % dialect)
            if msg[len(w.prefix) + 1:len(w.prefix) + 2] == [w.cmds["HEARTBEAT"]]:
                continue
            break
        assert msg == expected, "%s: expected %s got %s" % (dialect, fmt(expected), fmt(msg))
        w.close()


@pytest.mark.parametrize("dialect", ["mdp02", "mdp01", "majortomo"])
def test_request_held_by_bad_worker_goes_to_another(ctx, broker, threaded_workers, dialect):
    bad = RawWorker(ctx, broker.url, dialect=dialect)
    bad.ready(b"held")
    wait_service(ctx, broker.url, b"held")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"held", b"precious", b"cargo"])
    addr, body = bad.recv_request()
    assert body == [b"precious", b"cargo"]
    bad.send_raw(bad.prefix + [bad.header, b"\x09", b"garbage"])
    bad.expect_disconnect()
    bad.close()
    good = threaded_workers(ThreadedWorker(ctx, broker.url, b"held",
                                           lambda w, a, b: w.final(a, b"good", *b)))
    reply = recv(c, timeout=5, what="reply from the second worker")
    assert reply == [MDPC02, C02_FINAL, b"held", b"good", b"precious", b"cargo"], fmt(reply)
    assert good.requests == [[b"precious", b"cargo"]]
    assert_silent(c)


# ---------------------------------------------------------------------------
# Requests for services nobody serves
# ---------------------------------------------------------------------------

def test_queued_request_expires_service_unavailable(ctx, start_broker):
    timeout_ms = 600
    broker = start_broker(request_timeout_ms=timeout_ms)
    c02, c01, cmt = (new_dealer(ctx, broker.url) for _ in range(3))
    t0 = time.monotonic()
    c02.send_multipart([MDPC02, C02_REQUEST, b"nobody", b"hello?"])
    c01.send_multipart([b"", MDPC01, b"nobody", b"hello?"])
    cmt.send_multipart([b"", MDPC02, MT_REQUEST, b"nobody", b"hello?"])

    r02 = recv(c02, timeout=5, what="service_unavailable (mdp02)")
    elapsed = time.monotonic() - t0
    r01 = recv(c01, timeout=2, what="service_unavailable (mdp01)")
    rmt = recv(cmt, timeout=2, what="service_unavailable (majortomo)")

    assert len(r02) == 4 and r02[:3] == [MDPC02, C02_FINAL, b"nobody"], fmt(r02)
    assert len(r01) == 4 and r01[:3] == [b"", MDPC01, b"nobody"], fmt(r01)
    assert len(rmt) == 4 and rmt[:3] == [b"", MDPC02, MT_FINAL], fmt(rmt)
    for frame in (r02[3], r01[3], rmt[3]):
        err = parse_error(frame, "service_unavailable")
        if "service" in err:
            assert err["service"] == "nobody", err
    assert timeout_ms / 1000.0 * 0.8 <= elapsed <= timeout_ms / 1000.0 + 3, \
        "service_unavailable after %.2fs with --request-timeout-ms %d" % (elapsed, timeout_ms)
    for s in (c02, c01, cmt):
        assert_silent(s)
