"""Monitoring: the broker's stats PUB socket, `quire stats` and `quire exporter`.

A pyzmq SUB socket validates every snapshot and event against proto-json/ with jsonschema and
checks the counters against the work the test did; `quire stats` runs in a real terminal (tmux);
the exporter's /metrics is scraped over HTTP and parsed by prometheus_client.
"""

import json
import shutil
import socket
import subprocess
import time

import jsonschema
import pytest
import zmq
from prometheus_client.parser import text_string_to_metric_families
from referencing import Registry, Resource

import http_calls
from conftest import (DEAD_AFTER_S, MDPC02, C02_REQUEST, Proc, REPO_ROOT, accepts, call, free_port, new_dealer, recv, wait_until)
from stats_snapshot import service

SCHEMA_DIR = REPO_ROOT / "proto-json"
INTERVAL_MS = 200


def _load(name):
    with open(SCHEMA_DIR / name, "rb") as f:
        return json.load(f)


SCHEMAS = {n: _load(n) for n in ("stats-snapshot.schema.json", "stats-event.schema.json", "worker-report.schema.json")}
REGISTRY = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values()])
SNAPSHOT = jsonschema.Draft202012Validator(SCHEMAS["stats-snapshot.schema.json"], registry=REGISTRY)
EVENT = jsonschema.Draft202012Validator(SCHEMAS["stats-event.schema.json"], registry=REGISTRY)


def test_schemas_and_examples_are_valid():
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema, registry=REGISTRY)
        assert schema["examples"], schema["$id"]
        for example in schema["examples"]:
            validator.validate(example)


class Subscriber:
    """A raw pyzmq SUB on the stats socket that validates whatever it receives."""

    def __init__(self, ctx, url, topics=(b"quire.stats",)):
        self.sock = ctx.socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        for t in topics:
            self.sock.setsockopt(zmq.SUBSCRIBE, t)
        self.sock.connect(url)
        self.snapshots = []
        self.events = []

    def next(self, timeout=5.0):
        topic, body = recv(self.sock, timeout, "a stats message")
        doc = json.loads(body.decode("utf-8"))
        if topic == b"quire.stats":
            SNAPSHOT.validate(doc)
            self.snapshots.append(doc)
        elif topic == b"quire.event":
            EVENT.validate(doc)
            self.events.append(doc)
        else:
            raise AssertionError("unexpected topic %r" % topic)
        return topic, doc

    def snapshot(self, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            topic, doc = self.next(max(0.05, deadline - time.monotonic()))
            if topic == b"quire.stats":
                return doc

    def snapshot_where(self, predicate, timeout=10.0, what="a snapshot"):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.snapshot(max(0.05, deadline - time.monotonic()))
            if predicate(last):
                return last
        raise AssertionError("no %s within %.1fs; last: %s" % (what, timeout, json.dumps(last)[:2000]))

    def event_where(self, predicate, timeout=10.0, what="an event"):
        deadline = time.monotonic() + timeout
        for e in self.events:
            if predicate(e):
                return e
        while time.monotonic() < deadline:
            topic, doc = self.next(max(0.05, deadline - time.monotonic()))
            if topic == b"quire.event" and predicate(doc):
                return doc
        raise AssertionError("no %s within %.1fs; events: %s" % (what, timeout, self.events))

    def close(self):
        self.sock.close(0)


def completed(snapshot, name="echo"):
    s = service(snapshot, name)
    return s["requests"]["completed"] if s else 0


@pytest.fixture
def stats_broker(start_broker):
    port = free_port()
    b = start_broker(stats="tcp://127.0.0.1:%d" % port, stats_interval_ms=INTERVAL_MS)
    b.stats_url = "tcp://127.0.0.1:%d" % port
    return b


@pytest.fixture
def subscriber(ctx):
    subs = []

    def make(url, topics=(b"quire.stats",)):
        s = Subscriber(ctx, url, topics)
        subs.append(s)
        return s
    yield make
    for s in subs:
        s.close()


def pipelined_requests(ctx, url, n, payload=b"hello"):
    """n echo requests over one DEALER, 16 in flight; returns the replies' bodies."""
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(url)
    sent = received = 0
    bodies = []
    try:
        while received < n:
            while sent < n and sent - received < 16:
                dealer.send_multipart([MDPC02, C02_REQUEST, b"echo", payload])
                sent += 1
            msg = recv(dealer, 5.0, "an echo reply")
            assert msg[:3] == [MDPC02, b"\x03", b"echo"], msg
            bodies.append(msg[3:])
            received += 1
    finally:
        dealer.close(0)
    return bodies


def test_counters_match_the_work_done(ctx, stats_broker, start_echo_worker, subscriber):
    sub = subscriber(stats_broker.stats_url)
    start_echo_worker(stats_broker)
    before = sub.snapshot_where(lambda s: any(w["service"] == "echo" for w in s["workers"]), what="the echo worker")
    base = completed(before)
    base_in = service(before, "echo")["bytesIn"] if service(before, "echo") else 0
    base_runs = service(before, "echo")["runSeconds"]["count"] if service(before, "echo") else 0

    bodies = pipelined_requests(ctx, stats_broker.url, 100, payload=b"0123456789")
    assert bodies == [[b"0123456789"]] * 100

    after = sub.snapshot_where(lambda s: completed(s) >= base + 100, what="completed +100")
    echo = service(after, "echo")
    assert echo["requests"]["completed"] == base + 100
    assert echo["requests"]["submitted"] == base + 100
    assert echo["requests"]["failed"] == 0
    assert echo["bytesIn"] == base_in + 1000
    assert echo["runSeconds"]["count"] == base_runs + 100
    assert echo["runSeconds"]["windowCount"] >= 100
    assert 0 < echo["runSeconds"]["p50"] <= echo["runSeconds"]["p99"] <= echo["runSeconds"]["max"] < 5
    assert echo["workers"] == {"idle": 1, "busy": 0}
    assert echo["queue"]["depth"] == 0
    [worker] = [w for w in after["workers"] if w["service"] == "echo"]
    assert worker["jobsDone"] == base + 100
    assert worker["state"] == "idle" and worker["dialect"] == "mdp02"

    # Sequence numbers rise one by one, on one broker run; time moves forward.
    seqs = [s["sequence"] for s in sub.snapshots]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    assert len({s["broker"]["startedAtMs"] for s in sub.snapshots}) == 1
    times = [s["timeMs"] for s in sub.snapshots]
    assert times == sorted(times)

    # The worker's own report arrives with its next heartbeat (every 250 ms here).
    reported = sub.snapshot_where(
        lambda s: any(w["service"] == "echo" and w["report"] and w["report"]["jobsDone"] >= 100 for w in s["workers"]),
        what="the worker's report of its 100 jobs")
    [report] = [w["report"] for w in reported["workers"] if w["service"] == "echo"]
    assert report["jobsDone"] == base + 100
    assert 5_000_000 < report["rssBytes"] < 2_000_000_000
    assert report["engineSeconds"] >= 0


def test_late_subscriber_gets_totals(ctx, stats_broker, start_echo_worker, subscriber):
    start_echo_worker(stats_broker)
    pipelined_requests(ctx, stats_broker.url, 20)
    time.sleep(3 * INTERVAL_MS / 1000)  # snapshots go by that nobody receives
    # Subscribed only now: the first snapshot it sees already has the totals.
    sub = subscriber(stats_broker.stats_url)
    first = sub.snapshot_where(lambda s: completed(s) >= 20, what="totals")
    assert completed(first) == 20
    assert first["sequence"] > 1


def test_rejections_and_malformed(ctx, start_broker, subscriber):
    port = free_port()
    b = start_broker(stats="tcp://127.0.0.1:%d" % port, stats_interval_ms=INTERVAL_MS, max_message_bytes=1024)
    sub = subscriber("tcp://127.0.0.1:%d" % port)
    sub.snapshot()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(b.url)
    try:
        dealer.send_multipart([MDPC02, C02_REQUEST, b"echo", b"x" * 2000])
        reply = recv(dealer, 5.0, "too_large")
        assert b"too_large" in reply[-1]
        dealer.send_multipart([b"NOT-MDP", b"junk"])
        recv(dealer, 5.0, "the answer to junk")
    finally:
        dealer.close(0)
    s = sub.snapshot_where(lambda s: s["totals"]["malformedMessages"] >= 1 and s["totals"]["rejections"]["tooLarge"] >= 1,
                           what="the rejections")
    assert s["totals"]["rejections"]["tooLarge"] == 1
    assert service(s, "echo")["rejections"]["tooLarge"] == 1
    assert s["totals"]["malformedMessages"] == 1


def test_events_worker_joined_and_lost(ctx, stats_broker, start_echo_worker, subscriber):
    sub = subscriber(stats_broker.stats_url, topics=(b"quire.event",))
    time.sleep(0.3)  # let the subscription reach the broker (PUB drops what nobody subscribed to yet)
    worker = start_echo_worker(stats_broker)
    joined = sub.event_where(lambda e: e["kind"] == "worker.joined" and e["service"] == "echo", what="worker.joined")
    worker.p.kill()  # no DISCONNECT: the broker notices the closed connection or the silence
    lost = sub.event_where(lambda e: e["kind"] == "worker.lost", timeout=DEAD_AFTER_S * 4 + 5, what="worker.lost")
    assert lost["worker"] == joined["worker"]
    assert lost["reason"] in ("unreachable", "dropped")
    assert lost["sequence"] > joined["sequence"]

    # A worker that stops cleanly says DISCONNECT: it left.
    second = start_echo_worker(stats_broker)
    joined2 = sub.event_where(lambda e: e["kind"] == "worker.joined" and e["worker"] != joined["worker"], what="the second worker.joined")
    assert second.stop() == 0
    left = sub.event_where(lambda e: e["kind"] == "worker.lost" and e["worker"] == joined2["worker"], what="the second worker.lost")
    assert left["reason"] == "left"


def test_stats_once_json(quire_bin, ctx, stats_broker, start_echo_worker):
    start_echo_worker(stats_broker)
    pipelined_requests(ctx, stats_broker.url, 5)
    out = subprocess.run([quire_bin, "stats", "--stats", stats_broker.stats_url, "--once", "--json"],
                         capture_output=True, timeout=20)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    SNAPSHOT.validate(doc)
    assert completed(doc) == 5


def test_stats_once_without_broker_fails(quire_bin):
    out = subprocess.run([quire_bin, "stats", "--stats", "tcp://127.0.0.1:%d" % free_port(), "--once", "--timeout-ms", "500"],
                         capture_output=True, timeout=20)
    assert out.returncode == 1
    assert b"no stats snapshot" in out.stderr


def test_stats_in_a_terminal(quire_bin, ctx, stats_broker, start_echo_worker, tmp_path):
    tmux = shutil.which("tmux")
    assert tmux, "tmux is missing (scripts/install-deps installs it)"
    server = ["tmux", "-L", "quire-test-%d" % free_port(), "-f", "/dev/null"]
    # tmux's session command runs in a shell: quote nothing, the path and URL have no spaces.
    cmd = "%s stats --stats %s" % (quire_bin, stats_broker.stats_url)
    subprocess.run(server + ["new-session", "-d", "-s", "stats", "-x", "80", "-y", "30", cmd], check=True, timeout=10)

    def screen():
        r = subprocess.run(server + ["capture-pane", "-p", "-t", "stats"], capture_output=True, timeout=10)
        return r.stdout.decode("utf-8", "replace") if r.returncode == 0 else ""

    try:
        wait_until(lambda: "waiting for the broker" in screen() or "SERVICE" in screen(), 10, what="the stats screen")
        start_echo_worker(stats_broker)
        pipelined_requests(ctx, stats_broker.url, 30)
        # The screen is live: a snapshot published while the 30 were still running may be on it for
        # one interval, so wait for the one that counts all 30 done, then check the rest of that row.
        def settled():
            t = screen()
            rows = [l.split() for l in t.splitlines() if l.startswith("echo ")]
            return t if "WORKERS 1 connected" in t and rows and len(rows[0]) > 5 and rows[0][5] == "30" else None

        text = wait_until(settled, 10, what="the worker and its 30 done jobs on screen")
        cells = [l for l in text.splitlines() if l.startswith("echo ")][0].split()
        # SERVICE QUEUE IDLE BUSY DONE/S DONE ...: the queue is empty, one worker idle, 30 done.
        assert cells[1:4] == ["0", "1", "0"], text
        assert cells[5] == "30", text
        assert all(len(l) <= 80 for l in text.splitlines()), text
        # Ctrl-C: the program exits and the session (whose command it is) goes away.
        subprocess.run(server + ["send-keys", "-t", "stats", "C-c"], check=True, timeout=10)
        wait_until(lambda: subprocess.run(server + ["has-session", "-t", "stats"], capture_output=True).returncode != 0,
                   10, what="quire stats to exit on Ctrl-C")
    finally:
        subprocess.run(server + ["kill-server"], capture_output=True, timeout=10)


class Exporter(Proc):
    def __init__(self, quire_bin, stats_url, log_dir):
        self.port = free_port()
        super().__init__([quire_bin, "exporter", "--listen", "127.0.0.1:%d" % self.port, "--stats", stats_url],
                         log_dir / ("exporter-%d.log" % self.port))

    def url(self, path="/metrics"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def get(self, path="/metrics", method="GET"):
        return http_calls.get(self.url(path), method)


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def sample(fams, family, name, **labels):
    for s in fams[family].samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError("no %s%s in %s" % (name, labels, [s for s in fams[family].samples]))


def test_exporter_serves_prometheus_metrics(quire_bin, ctx, stats_broker, start_echo_worker, procs, tmp_path):
    exporter = Exporter(quire_bin, stats_broker.stats_url, tmp_path)
    procs.append(exporter)
    wait_until(lambda: exporter.alive() and accepts(exporter.port), 10, what="the exporter to listen")
    start_echo_worker(stats_broker)
    pipelined_requests(ctx, stats_broker.url, 100)

    def scraped():
        status, headers, body = exporter.get()
        if status != 200:
            return None
        fams = families(body)
        try:
            done = sample(fams, "quire_requests_completed", "quire_requests_completed_total", service="echo")
        except (AssertionError, KeyError):
            return None
        return (headers, body, fams) if done == 100 else None

    headers, body, fams = wait_until(scraped, 10, what="/metrics with 100 completed requests")
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert sample(fams, "quire_up", "quire_up") == 1
    assert fams["quire_requests_completed"].type == "counter"
    assert sample(fams, "quire_requests_submitted", "quire_requests_submitted_total", service="echo") == 100
    assert sample(fams, "quire_queue_depth", "quire_queue_depth", service="echo") == 0
    assert sample(fams, "quire_workers", "quire_workers", service="echo", state="idle") == 1
    assert fams["quire_run_seconds"].type == "summary"
    assert sample(fams, "quire_run_seconds", "quire_run_seconds_count", service="echo") == 100
    p50 = sample(fams, "quire_run_seconds", "quire_run_seconds", service="echo", quantile="0.5")
    assert 0 < p50 < 5
    # Bounded labels only: never a job or worker id.
    for f in fams.values():
        for s in f.samples:
            assert set(s.labels) <= {"service", "state", "reason", "priority", "quantile", "store"}, s
            assert s.name.startswith("quire_")

    # HTTP edges: 404, 405, HEAD, a bad request, and a client that sends nothing.
    assert exporter.get("/nope")[0] == 404
    assert exporter.get("/metrics", method="POST")[0] == 405
    status, headers, body = exporter.get("/metrics", method="HEAD")
    assert status == 200 and body == "" and int(headers["Content-Length"]) > 0
    silent = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
    try:
        assert exporter.get()[0] == 200  # served while the silent client holds its connection
        raw = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
        raw.sendall(b"BLAH\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 400 ")
        raw.close()
        half = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
        half.sendall(b"GET /metr")
        half.close()  # gone mid-request
    finally:
        silent.close()
    assert exporter.get()[0] == 200
    assert exporter.alive()


def test_exporter_survives_junk(quire_bin, stats_broker, procs, tmp_path):
    import random
    exporter = Exporter(quire_bin, stats_broker.stats_url, tmp_path)
    procs.append(exporter)
    wait_until(lambda: exporter.alive() and accepts(exporter.port), 10, what="the exporter to listen")
    rng = random.Random(6)
    answers = {}
    for n in range(200):
        s = socket.create_connection(("127.0.0.1", exporter.port), timeout=5)
        try:
            kind = n % 4
            if kind == 0:
                s.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300))) + b"\r\n\r\n")
            elif kind == 1:
                s.sendall(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n")
            elif kind == 2:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finishes its head
                s.close()
                continue
            else:
                s.sendall(b"PUT /metrics HTTP/1.1\r\n\r\n")
            head = s.recv(64)
            status = head.split(b" ")[1] if head.startswith(b"HTTP/1.1 ") else head
            answers[status] = answers.get(status, 0) + 1
        except (ConnectionResetError, BrokenPipeError):
            answers["reset"] = answers.get("reset", 0) + 1
        finally:
            s.close()
    assert set(answers) <= {b"400", b"405", b"431", "reset"}, answers
    assert answers.get(b"405") == 50 and answers.get(b"431", 0) + answers.get("reset", 0) >= 1
    assert exporter.get()[0] == 200
    assert exporter.alive()


def test_durable_job_figures(ctx, start_broker, start_echo_worker, subscriber, tmp_path):
    """Jobs are counted as jobs (not as requests), queued jobs by priority, expiries."""
    port = free_port()
    b = start_broker(stats="tcp://127.0.0.1:%d" % port, stats_interval_ms=INTERVAL_MS, data=str(tmp_path / "data"),
                     job_services="later")
    sub = subscriber("tcp://127.0.0.1:%d" % port)
    start_echo_worker(b)
    time.sleep(0.3)
    s = new_dealer(ctx, b.url)
    for n in range(20):
        s.send_multipart([b"MDPC02", b"\x01", b"titanic.request", b"echo", b"job-%d" % n])
    for n in range(3):
        s.send_multipart([b"MDPC02", b"\x01", b"titanic.request", b"later", b'{"job":{"priority":"high"}}', b"x"])
    s.send_multipart([b"MDPC02", b"\x01", b"titanic.request", b"later", b'{"job":{"priority":"low","deadlineMs":200}}', b"x"])
    ids = []
    for _ in range(24):
        assert s.poll(5000)
        msg = s.recv_multipart()
        assert msg[3] == b"200", msg
        ids.append(msg[4])
    s.close(0)
    snap = sub.snapshot_where(lambda x: (service(x, "echo") or {}).get("jobs", {}).get("completed") == 20
                              and (service(x, "later") or {}).get("jobs", {}).get("expired") == 1,
                              what="20 echo jobs completed and one expired")
    echo = service(snap, "echo")
    assert echo["jobs"]["submitted"] == 20 and echo["jobs"]["failed"] == 0
    assert echo["requests"]["submitted"] == 0 and echo["requests"]["completed"] == 0, "job attempts are not requests"
    assert echo["runSeconds"]["count"] >= 20
    later = service(snap, "later")
    assert later["jobs"]["submitted"] == 4
    assert later["queue"]["jobs"] == {"high": 3, "normal": 0, "low": 0}, later["queue"]


def test_an_exporter_or_stats_view_takes_one_broker_since_brokers_sharing_a_store_each_publish_their_own(quire_bin):
    """Brokers serving one store together each publish their own figures (their workers, their claims):
    a list of brokers would interleave them into one set of gauges, so it is refused with the reason."""
    both = "tcp://127.0.0.1:%d,tcp://127.0.0.1:%d" % (free_port(), free_port())
    for argv in (["exporter", "--listen", "127.0.0.1:%d" % free_port(), "--stats", both], ["stats", "--once", "--stats", both]):
        result = subprocess.run([quire_bin] + argv, capture_output=True, text=True, timeout=20)
        assert result.returncode == 2, (argv, result.stderr)
        assert "one per broker" in result.stderr and "--stats" in result.stderr, result.stderr


def test_the_job_store_is_in_the_snapshot_and_the_exporter(quire_bin, ctx, start_broker, start_echo_worker, subscriber, procs, tmp_path):
    stats_url = "tcp://127.0.0.1:%d" % free_port()
    broker = start_broker(stats=stats_url, stats_interval_ms=INTERVAL_MS, data=str(tmp_path / "data"))
    start_echo_worker(broker)
    sub = subscriber(stats_url)
    sock = new_dealer(ctx, broker.url)
    for n in range(5):
        reply = call(sock, "mdp02", b"titanic.request", b"echo", b"{}", b"job %d" % n)
        assert reply[0][0] == b"200", reply
    sock.close(0)
    # Schema-checked on receipt (Subscriber.next): the store's kind, its commits, their times.
    snap = sub.snapshot_where(lambda s: (s.get("store") or {}).get("commits", 0) >= 5, what="a snapshot with the store's commits")
    store = snap["store"]
    assert store["kind"] == "sqlite" and store["state"] == "serving"
    assert store["commitFailures"] == 0 and store["connectionsLost"] == 0
    assert store["commitSeconds"]["count"] == store["commits"] + store["commitFailures"]
    assert 0 < store["commitSeconds"]["p50"] < 5
    exporter = Exporter(quire_bin, stats_url, tmp_path)
    procs.append(exporter)
    wait_until(lambda: exporter.alive() and accepts(exporter.port), 10, what="the exporter to listen")

    def scraped():
        status, _, body = exporter.get()
        if status != 200 or "quire_store_commits_total" not in body:
            return None
        return families(body)

    fams = wait_until(scraped, 10, what="/metrics with the store's figures")
    assert sample(fams, "quire_store_commits", "quire_store_commits_total") >= 5
    assert sample(fams, "quire_store_info", "quire_store_info", store="sqlite") == 1
    assert sample(fams, "quire_store_serving", "quire_store_serving") == 1
    assert fams["quire_store_commit_seconds"].type == "summary"
