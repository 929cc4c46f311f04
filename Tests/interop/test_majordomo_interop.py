"""Interop: third-party and hand-written Majordomo peers against the quire broker.

Dialects (the broker answers each peer in the dialect it used):
  mdp02     RFC 18, no leading empty frame
  mdp01     RFC 7, leading empty frame, no partial replies
  majortomo majortomo 0.2.0: leading empty frame, MDPC02 with 0x02 REQUEST / 0x03 PARTIAL / 0x04 FINAL
"""

import signal
import time

import pytest
import zmq
from majortomo import Client

from conftest import (
    C02_FINAL, C02_PARTIAL, C02_REQUEST, DEAD_AFTER_S, MDPC01, MDPC02, MT_FINAL,
    RawWorker, ThreadedWorker, call, fmt, mmi, new_dealer, parse_error, recv, assert_silent,
    wait_service,
)

BINARY_BODY = bytes(range(256))
MULTI_FRAME_BODIES = [
    [b"hello"],
    [b"a", b"b", b"c"],
    [b"", b"empty frames", b""],
    [BINARY_BODY, b"\x00" * 10, "ünïcödé".encode("utf-8")],
    [b"x" * 20000, b"y"],
    [b"frame-%d" % i for i in range(40)],
]


def majortomo_client(broker):
    c = Client(broker.url, zmq_context=zmq.Context.instance(), zmq_linger=0)
    c.connect()
    return c


# ---------------------------------------------------------------------------
# 1. majortomo Client -> quire broker -> majortomo Worker
# ---------------------------------------------------------------------------

def test_majortomo_client_to_majortomo_worker(broker, start_majortomo_worker):
    start_majortomo_worker(broker, b"mt-echo")
    client = majortomo_client(broker)
    try:
        for i in range(20):
            for body in MULTI_FRAME_BODIES:
                body = body + [b"#%d" % i]
                client.send(b"mt-echo", *body)
                got = client.recv_all_as_list(timeout=5)
                assert got == body, "request %d: sent %s got %s" % (i, fmt(body), fmt(got))
    finally:
        client.close()


def test_majortomo_client_receives_majortomo_worker_partials(broker, start_majortomo_worker):
    start_majortomo_worker(broker, b"mt-echo")
    client = majortomo_client(broker)
    try:
        for _ in range(3):
            client.send(b"mt-echo", b"stream", b"tail")
            parts = list(client.recv_all(timeout=5))
            assert parts == [[b"part-1"], [b"part-2a", b"part-2b"], [b"done", b"tail"]]
    finally:
        client.close()


@pytest.mark.parametrize("dialect", ["mdp02", "mdp01"])
def test_raw_client_to_majortomo_worker(ctx, broker, start_majortomo_worker, dialect):
    """Cross-dialect: an RFC 18 / RFC 7 client served by the majortomo worker."""
    start_majortomo_worker(broker, b"mt-echo")
    s = new_dealer(ctx, broker.url)
    for body in MULTI_FRAME_BODIES:
        parts = call(s, dialect, b"mt-echo", *body)
        assert parts == [body]


def test_rfc18_client_sees_majortomo_worker_partials(ctx, broker, start_majortomo_worker):
    start_majortomo_worker(broker, b"mt-echo")
    s = new_dealer(ctx, broker.url)
    s.send_multipart([MDPC02, C02_REQUEST, b"mt-echo", b"stream", b"t"])
    assert recv(s) == [MDPC02, C02_PARTIAL, b"mt-echo", b"part-1"]
    assert recv(s) == [MDPC02, C02_PARTIAL, b"mt-echo", b"part-2a", b"part-2b"]
    assert recv(s) == [MDPC02, C02_FINAL, b"mt-echo", b"done", b"t"]
    assert_silent(s)


# ---------------------------------------------------------------------------
# 2. majortomo Client -> quire broker -> quire echo worker
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("worker_dialect", [None, "mdp02", "mdp01", "majortomo"])
def test_majortomo_client_to_quire_echo_worker(broker, start_echo_worker, worker_dialect):
    start_echo_worker(broker, dialect=worker_dialect)
    client = majortomo_client(broker)
    try:
        for i in range(10):
            for body in MULTI_FRAME_BODIES:
                client.send(b"echo", *body)
                got = client.recv_all_as_list(timeout=5)
                assert got == body, "request %d: sent %s got %s" % (i, fmt(body), fmt(got))
    finally:
        client.close()


def test_majortomo_client_exact_frames_on_wire(ctx, broker, echo_worker):
    """What majortomo's client sends, byte for byte, and the exact reply shape."""
    s = new_dealer(ctx, broker.url)
    s.send_multipart([b"", MDPC02, b"\x02", b"echo", b"one", b"two"])
    assert recv(s) == [b"", MDPC02, MT_FINAL, b"one", b"two"]
    assert_silent(s)


# ---------------------------------------------------------------------------
# 3. Raw RFC 18 client and worker
# ---------------------------------------------------------------------------

def test_rfc18_client_exact_frames(ctx, broker, echo_worker):
    s = new_dealer(ctx, broker.url)
    for body in MULTI_FRAME_BODIES:
        s.send_multipart([MDPC02, C02_REQUEST, b"echo"] + body)
        reply = recv(s)
        assert reply == [MDPC02, C02_FINAL, b"echo"] + body, "sent %s got %s" % (fmt(body), fmt(reply))
    assert_silent(s)


def test_rfc18_client_pipelined_requests(ctx, broker, echo_worker):
    """MDP/0.2 lets a DEALER client have several requests in flight."""
    s = new_dealer(ctx, broker.url)
    n = 50
    for i in range(n):
        s.send_multipart([MDPC02, C02_REQUEST, b"echo", b"req-%d" % i])
    got = set()
    for _ in range(n):
        reply = recv(s)
        assert reply[:3] == [MDPC02, C02_FINAL, b"echo"] and len(reply) == 4, fmt(reply)
        got.add(reply[3])
    assert got == {b"req-%d" % i for i in range(n)}
    assert_silent(s)


def test_many_concurrent_clients(ctx, broker, start_echo_worker):
    start_echo_worker(broker)
    start_echo_worker(broker, dialect="mdp01")
    socks = [new_dealer(ctx, broker.url) for _ in range(8)]
    for rnd in range(10):
        for i, s in enumerate(socks):
            s.send_multipart([MDPC02, C02_REQUEST, b"echo", b"c%d-r%d" % (i, rnd)])
        for i, s in enumerate(socks):
            assert recv(s) == [MDPC02, C02_FINAL, b"echo", b"c%d-r%d" % (i, rnd)]


@pytest.mark.parametrize("worker_dialect", ["mdp02", "majortomo"])
def test_raw_worker_partial_then_final(ctx, broker, worker_dialect):
    w = RawWorker(ctx, broker.url, dialect=worker_dialect)
    w.ready(b"stream")
    wait_service(ctx, broker.url, b"stream")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"stream", b"q1", b"q2"])
    addr, body = w.recv_request()
    assert body == [b"q1", b"q2"]
    w.partial(addr, b"p1")
    assert recv(c) == [MDPC02, C02_PARTIAL, b"stream", b"p1"]
    w.partial(addr, b"p2", b"p2b")
    assert recv(c) == [MDPC02, C02_PARTIAL, b"stream", b"p2", b"p2b"]
    w.final(addr, b"end")
    assert recv(c) == [MDPC02, C02_FINAL, b"stream", b"end"]
    assert_silent(c)

    # the worker is available again after FINAL
    c.send_multipart([MDPC02, C02_REQUEST, b"stream", b"again"])
    addr, body = w.recv_request()
    assert body == [b"again"]
    w.final(addr, b"ok")
    assert recv(c) == [MDPC02, C02_FINAL, b"stream", b"ok"]
    w.close()


def test_raw_worker_partials_reach_majortomo_client(ctx, broker):
    w = RawWorker(ctx, broker.url, dialect="mdp02")
    w.ready(b"stream")
    wait_service(ctx, broker.url, b"stream")
    client = majortomo_client(broker)
    try:
        client.send(b"stream", b"go")
        addr, body = w.recv_request()
        assert body == [b"go"]
        w.partial(addr, b"p1")
        w.partial(addr, b"p2")
        w.final(addr, b"f")
        assert list(client.recv_all(timeout=5)) == [[b"p1"], [b"p2"], [b"f"]]
    finally:
        client.close()
        w.close()


def test_raw_worker_client_address_is_opaque_and_routes_back(ctx, broker):
    """Two clients, one worker: each FINAL goes to the client whose address the worker echoed."""
    w = RawWorker(ctx, broker.url)
    w.ready(b"svc")
    wait_service(ctx, broker.url, b"svc")
    c1, c2 = new_dealer(ctx, broker.url), new_dealer(ctx, broker.url)
    c1.send_multipart([MDPC02, C02_REQUEST, b"svc", b"from-1"])
    a1, b1 = w.recv_request()
    c2.send_multipart([MDPC02, C02_REQUEST, b"svc", b"from-2"])
    w.final(a1, b"to-1")
    a2, b2 = w.recv_request()
    assert (b1, b2) == ([b"from-1"], [b"from-2"])
    assert a1 != a2
    w.final(a2, b"to-2")
    assert recv(c1) == [MDPC02, C02_FINAL, b"svc", b"to-1"]
    assert recv(c2) == [MDPC02, C02_FINAL, b"svc", b"to-2"]
    w.close()


def test_mdp01_raw_worker_serves_rfc18_client(ctx, broker):
    w = RawWorker(ctx, broker.url, dialect="mdp01")
    w.ready(b"old")
    wait_service(ctx, broker.url, b"old")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"old", b"x", b"y"])
    addr, body = w.recv_request()
    assert body == [b"x", b"y"]
    w.final(addr, b"X", b"Y")  # MDP/0.1 REPLY (0x03)
    assert recv(c) == [MDPC02, C02_FINAL, b"old", b"X", b"Y"]
    w.close()


# ---------------------------------------------------------------------------
# 4. MDP/0.1 client (zguide style)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("worker_dialect", ["mdp02", "mdp01"])
def test_mdp01_client_to_echo_worker(ctx, broker, start_echo_worker, worker_dialect):
    start_echo_worker(broker, dialect=worker_dialect)
    s = new_dealer(ctx, broker.url)
    for body in MULTI_FRAME_BODIES:
        s.send_multipart([b"", MDPC01, b"echo"] + body)
        reply = recv(s)
        assert reply == [b"", MDPC01, b"echo"] + body, "sent %s got %s" % (fmt(body), fmt(reply))
    assert_silent(s)


def test_mdp01_client_via_req_socket(ctx, broker, echo_worker):
    """zguide's mdcliapi uses REQ: the empty delimiter is added/stripped by libzmq."""
    s = ctx.socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(broker.url)
    for body in MULTI_FRAME_BODIES[:3]:
        s.send_multipart([MDPC01, b"echo"] + body)
        assert recv(s) == [MDPC01, b"echo"] + body


def test_mdp01_client_gets_single_reply_from_streaming_worker(ctx, broker):
    """MDP/0.1 has no partial replies. Ambiguous in the brief; a 0.1 client can only
    understand one reply per request, so we expect exactly one message, ending in the
    FINAL frames (whether the broker drops or merges the partials is not asserted)."""
    w = RawWorker(ctx, broker.url, dialect="mdp02")
    w.ready(b"stream")
    wait_service(ctx, broker.url, b"stream")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([b"", MDPC01, b"stream", b"q"])
    addr, _ = w.recv_request()
    w.partial(addr, b"p1")
    w.final(addr, b"fin")
    reply = recv(c)
    assert reply[:3] == [b"", MDPC01, b"stream"] and reply[-1] == b"fin", fmt(reply)
    assert_silent(c, 0.5)
    w.close()


# ---------------------------------------------------------------------------
# 5. MMI (RFC 8)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", ["mdp02", "mdp01", "majortomo"])
def test_mmi_service(ctx, broker, echo_worker, dialect):
    assert mmi(ctx, broker.url, b"echo", dialect=dialect) == [b"200"]
    assert mmi(ctx, broker.url, b"no-such-service", dialect=dialect) == [b"404"]
    assert mmi(ctx, broker.url, b"echo", dialect=dialect, mmi_service=b"mmi.foo") == [b"501"]


def test_mmi_exact_frames(ctx, broker, echo_worker):
    s = new_dealer(ctx, broker.url)
    s.send_multipart([MDPC02, C02_REQUEST, b"mmi.service", b"echo"])
    assert recv(s) == [MDPC02, C02_FINAL, b"mmi.service", b"200"]
    s.send_multipart([b"", MDPC01, b"mmi.service", b"nope"])
    assert recv(s) == [b"", MDPC01, b"mmi.service", b"404"]
    s.send_multipart([MDPC02, C02_REQUEST, b"mmi.foo", b"echo"])
    assert recv(s) == [MDPC02, C02_FINAL, b"mmi.foo", b"501"]
    s.send_multipart([b"", MDPC01, b"mmi.foo"])  # 0.1: no body at all
    assert recv(s) == [b"", MDPC01, b"mmi.foo", b"501"]


def test_mmi_with_majortomo_client(broker, echo_worker):
    client = majortomo_client(broker)
    try:
        client.send(b"mmi.service", b"echo")
        assert client.recv_all_as_list(timeout=5) == [b"200"]
        client.send(b"mmi.service", b"ghost")
        assert client.recv_all_as_list(timeout=5) == [b"404"]
        client.send(b"mmi.bogus", b"echo")
        assert client.recv_all_as_list(timeout=5) == [b"501"]
    finally:
        client.close()


def test_mmi_tracks_worker_registration(ctx, broker):
    assert mmi(ctx, broker.url, b"late") == [b"404"]
    w = RawWorker(ctx, broker.url)
    w.ready(b"late")
    wait_service(ctx, broker.url, b"late", b"200", timeout=3)
    w.send("DISCONNECT")
    wait_service(ctx, broker.url, b"late", b"404", timeout=3)
    w.close()


# ---------------------------------------------------------------------------
# 7. Worker death, retries, max attempts
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["die", "silent", "disconnect"])
def test_request_survives_worker_death(ctx, broker, threaded_workers, how):
    """W1 takes the request and then dies (socket closed) / goes silent / sends
    DISCONNECT; the broker must hand the request to W2."""
    taken = []

    def first_dies(w, addr, body):
        taken.append(w)
        if len(taken) == 1:
            return how
        w.final(addr, b"served-by-survivor", *body)

    w1 = threaded_workers(ThreadedWorker(ctx, broker.url, b"fragile", first_dies))
    wait_service(ctx, broker.url, b"fragile")
    w2 = threaded_workers(ThreadedWorker(ctx, broker.url, b"fragile", first_dies))
    time.sleep(0.2)  # let W2's READY land

    c = new_dealer(ctx, broker.url)
    t0 = time.monotonic()
    c.send_multipart([MDPC02, C02_REQUEST, b"fragile", b"payload", b"2"])
    reply = recv(c, timeout=DEAD_AFTER_S * 3 + 5, what="reply after worker death")
    elapsed = time.monotonic() - t0
    assert reply == [MDPC02, C02_FINAL, b"fragile", b"served-by-survivor", b"payload", b"2"], fmt(reply)
    assert len(taken) == 2 and taken[0] is not taken[1], "request went to %d workers" % len(taken)
    assert {w1, w2} == set(taken)
    assert taken[1].requests == [[b"payload", b"2"]], "retry must carry the original body"
    assert not w1.errors and not w2.errors, (w1.errors, w2.errors)
    assert_silent(c, 0.3)
    if how == "disconnect":
        # a worker that says goodbye needs no heartbeat expiry
        assert elapsed < DEAD_AFTER_S * 2 + 1, elapsed


def test_worker_lost_after_max_attempts(ctx, start_broker, threaded_workers):
    broker = start_broker(max_attempts=2)
    taken = []

    def die(w, addr, body):
        taken.append(w)
        return "die"

    workers = []
    for _ in range(3):
        workers.append(threaded_workers(ThreadedWorker(ctx, broker.url, b"doomed", die)))
    wait_service(ctx, broker.url, b"doomed")
    time.sleep(0.2)

    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"doomed", b"payload"])
    reply = recv(c, timeout=DEAD_AFTER_S * 6 + 5, what="worker_lost error")
    assert len(reply) == 4 and reply[:3] == [MDPC02, C02_FINAL, b"doomed"], fmt(reply)
    err = parse_error(reply[3], "worker_lost")
    if "attempts" in err:
        assert err["attempts"] == 2, err
    if "service" in err:
        assert err["service"] == "doomed", err
    assert len(taken) == 2, "--max-attempts 2 but %d workers took the request" % len(taken)
    assert_silent(c, 0.5)

    # broker still serves: the surviving (third) worker answers a new request
    survivors = [w for w in workers if w not in taken]
    assert len(survivors) == 1
    survivors[0].on_request = lambda w, addr, body: w.final(addr, b"alive", *body)
    c.send_multipart([MDPC02, C02_REQUEST, b"doomed", b"next"])
    assert recv(c, timeout=5) == [MDPC02, C02_FINAL, b"doomed", b"alive", b"next"]


def test_worker_lost_default_max_attempts_mdp01_client(ctx, broker, threaded_workers):
    """Default --max-attempts is 3; error reply in the MDP/0.1 client's dialect."""
    taken = []

    def die(w, addr, body):
        taken.append(w)
        return "die"

    for _ in range(3):
        threaded_workers(ThreadedWorker(ctx, broker.url, b"doomed", die))
    wait_service(ctx, broker.url, b"doomed")
    time.sleep(0.2)
    c = new_dealer(ctx, broker.url)
    c.send_multipart([b"", MDPC01, b"doomed", b"payload"])
    reply = recv(c, timeout=DEAD_AFTER_S * 8 + 5, what="worker_lost error")
    assert len(reply) == 4 and reply[:3] == [b"", MDPC01, b"doomed"], fmt(reply)
    err = parse_error(reply[3], "worker_lost")
    if "attempts" in err:
        assert err["attempts"] == 3, err
    assert len(taken) == 3


def test_idle_worker_expires_without_heartbeats(ctx, broker):
    w = RawWorker(ctx, broker.url)
    w.ready(b"quiet")
    wait_service(ctx, broker.url, b"quiet")
    # no heartbeats from now on: gone after liveness * interval
    wait_service(ctx, broker.url, b"quiet", b"404", timeout=DEAD_AFTER_S * 3 + 2)
    w.close()


def test_broker_heartbeats_idle_worker(ctx, broker):
    w = RawWorker(ctx, broker.url)
    w.ready(b"hb")
    deadline = time.monotonic() + 2.0
    beats = 0
    while time.monotonic() < deadline:
        w.heartbeat()
        if w.sock.poll(100, zmq.POLLIN):
            name, frames = w.parse(w.sock.recv_multipart())
            assert name == w.cmds["HEARTBEAT"] and frames == [], "unexpected %r %s" % (name, fmt(frames))
            beats += 1
    # 250 ms interval over 2 s: expect about 8
    assert beats >= 3, "broker sent %d heartbeats in 2 s with --heartbeat-interval-ms 250" % beats
    assert mmi(ctx, broker.url, b"hb") == [b"200"]
    w.close()


# ---------------------------------------------------------------------------
# Process lifecycle
# ---------------------------------------------------------------------------

def test_broker_exits_zero_on_sigterm(broker):
    assert broker.stop(signal.SIGTERM, timeout=10) == 0, broker.log_tail()


def test_broker_exits_zero_on_sigint(broker):
    assert broker.stop(signal.SIGINT, timeout=10) == 0, broker.log_tail()


def test_echo_worker_exits_zero_on_sigterm_and_unregisters(ctx, broker, start_echo_worker):
    p = start_echo_worker(broker)
    assert mmi(ctx, broker.url, b"echo") == [b"200"]
    assert p.stop(signal.SIGTERM, timeout=10) == 0, p.log_tail()
    wait_service(ctx, broker.url, b"echo", b"404", timeout=DEAD_AFTER_S * 3 + 2)


def test_broker_logs_json_lines(broker, echo_worker, ctx):
    import json
    s = new_dealer(ctx, broker.url)
    call(s, "mdp02", b"echo", b"x")
    broker.stop()
    lines = [ln for ln in open(broker.log_path, "rb").read().decode("utf-8", "replace").splitlines() if ln.strip()]
    assert lines, "broker logged nothing to stderr"
    for ln in lines:
        try:
            assert isinstance(json.loads(ln), dict)
        except ValueError:
            raise AssertionError("broker stderr line is not JSON: %r" % ln)


def test_queued_request_served_when_worker_registers_late(ctx, broker, threaded_workers):
    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"later", b"waiting"])
    assert_silent(c, 0.4, "client before any worker registered")
    threaded_workers(ThreadedWorker(ctx, broker.url, b"later"))
    assert recv(c, timeout=5) == [MDPC02, C02_FINAL, b"later", b"waiting"]


# ---------------------------------------------------------------------------
# Edge cases a ZeroMQ user runs into
# ---------------------------------------------------------------------------

def test_large_body_roundtrip(ctx, broker, echo_worker):
    """Default --max-message-bytes is far above 1 MiB."""
    big = bytes(range(256)) * 4096  # 1 MiB
    s = new_dealer(ctx, broker.url)
    s.send_multipart([MDPC02, C02_REQUEST, b"echo", big, b"tail"])
    assert recv(s, timeout=10) == [MDPC02, C02_FINAL, b"echo", big, b"tail"]
    client = majortomo_client(broker)
    try:
        client.send(b"echo", big)
        assert client.recv_all_as_list(timeout=10) == [big]
    finally:
        client.close()


def test_majortomo_worker_silent_while_busy_is_not_expired(broker, start_majortomo_worker):
    """majortomo.Worker sends no heartbeats while it works on a request. The broker must
    not declare it dead after heartbeat liveness (here 1 s) while it holds a request
    (quire's --busy-worker-timeout-ms covers that case, default 15 min)."""
    start_majortomo_worker(broker, b"mt-echo")
    client = majortomo_client(broker)
    try:
        client.send(b"mt-echo", b"sleep", b"%.2f" % (DEAD_AFTER_S * 2))
        got = client.recv_all_as_list(timeout=DEAD_AFTER_S * 2 + 5)
        assert got == [b"slept", b"%.2f" % (DEAD_AFTER_S * 2)], got
        # and it is still registered and serving afterwards
        client.send(b"mt-echo", b"after")
        assert client.recv_all_as_list(timeout=5) == [b"after"]
    finally:
        client.close()


def test_mdp01_worker_silent_while_busy_is_not_expired(ctx, broker):
    """RFC 7 workers do not heartbeat while busy either."""
    w = RawWorker(ctx, broker.url, dialect="mdp01")
    w.ready(b"slow01")
    wait_service(ctx, broker.url, b"slow01")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([b"", MDPC01, b"slow01", b"work"])
    addr, body = w.recv_request()
    time.sleep(DEAD_AFTER_S * 1.8)  # silent, longer than liveness * interval
    w.final(addr, b"done")
    assert recv(c, timeout=5) == [b"", MDPC01, b"slow01", b"done"]
    assert_silent(c)
    w.close()


def test_late_final_from_replaced_worker_is_not_delivered(ctx, broker, threaded_workers):
    """W1 goes silent holding the request, the broker re-sends it to W2 which answers;
    when W1 wakes up and sends its FINAL, the client must not get a second reply."""
    w1 = RawWorker(ctx, broker.url)
    w1.ready(b"twice")
    wait_service(ctx, broker.url, b"twice")
    c = new_dealer(ctx, broker.url)
    c.send_multipart([MDPC02, C02_REQUEST, b"twice", b"job"])
    addr, body = w1.recv_request()
    threaded_workers(ThreadedWorker(ctx, broker.url, b"twice", lambda w, a, b: w.final(a, b"from-w2", *b)))
    reply = recv(c, timeout=DEAD_AFTER_S * 3 + 5, what="reply from W2 after W1 went silent")
    assert reply == [MDPC02, C02_FINAL, b"twice", b"from-w2", b"job"], fmt(reply)
    w1.final(addr, b"from-w1-too-late")
    assert_silent(c, 0.5, "client after a late FINAL from an expired worker")
    # the broker keeps serving
    c.send_multipart([MDPC02, C02_REQUEST, b"twice", b"job2"])
    assert recv(c) == [MDPC02, C02_FINAL, b"twice", b"from-w2", b"job2"]
    w1.close()


def test_client_gone_before_reply(ctx, broker):
    w = RawWorker(ctx, broker.url)
    w.ready(b"svc")
    wait_service(ctx, broker.url, b"svc")
    c1 = new_dealer(ctx, broker.url)
    c1.send_multipart([MDPC02, C02_REQUEST, b"svc", b"abandoned"])
    addr, body = w.recv_request()
    c1.close(0)
    time.sleep(0.1)
    w.final(addr, b"nobody-listens")
    c2 = new_dealer(ctx, broker.url)
    c2.send_multipart([MDPC02, C02_REQUEST, b"svc", b"next"])
    addr2, body2 = w.recv_request()
    assert body2 == [b"next"]
    w.final(addr2, b"ok")
    assert recv(c2) == [MDPC02, C02_FINAL, b"svc", b"ok"]
    w.close()


def test_busy_when_service_queue_full(ctx, start_broker, threaded_workers):
    """`quire broker --max-queued N` (from `quire broker --help`, not the brief):
    request N+1 for a service without a free worker is refused at once with `busy`."""
    broker = start_broker(max_queued=2, request_timeout_ms=10000)
    s = new_dealer(ctx, broker.url)
    for i in range(3):
        s.send_multipart([MDPC02, C02_REQUEST, b"backlog", b"r%d" % i])
    reply = recv(s, timeout=3, what="busy error for the third queued request")
    assert len(reply) == 4 and reply[:3] == [MDPC02, C02_FINAL, b"backlog"], fmt(reply)
    err = parse_error(reply[3], "busy")
    assert err["retryable"] is True, err
    if "limit" in err:
        assert err["limit"] == 2, err
    # the two queued requests are served once a worker shows up
    threaded_workers(ThreadedWorker(ctx, broker.url, b"backlog"))
    got = {tuple(recv(s, timeout=5)) for _ in range(2)}
    assert got == {(MDPC02, C02_FINAL, b"backlog", b"r0"), (MDPC02, C02_FINAL, b"backlog", b"r1")}, got
