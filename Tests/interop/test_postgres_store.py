"""Durable jobs in a PostgreSQL store that brokers on several machines serve together (`quire broker
--store`).

Every broker accepts jobs and answers for any job; each claims queued jobs for its own idle workers,
holds a lease it renews, and writes results fenced by the attempt: a broker SIGKILLed, cut off or
whose session ends loses no accepted job, and a late write of one cut off cannot overwrite a newer
attempt. The store is the test server `scripts/test` starts (`QUIRE_TEST_POSTGRES`); each test gets a
schema of its own. Leases are 2 s here (15 s by default), so that what a silent broker held moves on soon.
"""

import json
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

import ocr_images as oi
from conftest import QUIRE_BIN, HB_MS, LIVENESS, Proc, free_port, fmt, try_mmi, wait_until
from test_stats import SNAPSHOT
from test_titanic import Titanic, start_echo


def server():
    uri = os.environ.get("QUIRE_TEST_POSTGRES")
    if not uri:
        pytest.fail("QUIRE_TEST_POSTGRES is not set: run the tests with scripts/test, which starts a PostgreSQL server (scripts/test-postgres)")
    return uri


def psql(sql):
    return subprocess.run(["psql", server(), "-qAtc", sql], check=True, capture_output=True, text=True, timeout=30).stdout.strip()


@pytest.fixture
def store():
    schema = "it_" + uuid.uuid4().hex
    psql("CREATE SCHEMA %s" % schema)
    yield server() + "&options=-csearch_path%%3D%s" % schema
    psql("DROP SCHEMA %s CASCADE" % schema)


LEASE_MS = 2000


def start_store_broker(ctx, procs, tmp_path, store, name, port=None, poll_ms=250, extra=()):
    """A broker on `store` (on `port`, to restart one where its clients and workers expect it), with
    its stats socket, looking for work every `poll_ms` when not notified; waits until it serves."""
    port = port or free_port()
    url = "tcp://127.0.0.1:%d" % port
    stats = "tcp://127.0.0.1:%d" % free_port()
    argv = [QUIRE_BIN, "broker", "--bind", url, "--store", store, "--auth", "off", "--heartbeat-interval-ms", str(HB_MS),
            "--heartbeat-liveness", str(LIVENESS), "--request-timeout-ms", "5000", "--store-lease-ms", str(LEASE_MS),
            "--store-poll-ms", str(poll_ms), "--stats", stats, "--stats-interval-ms", "200"] + list(extra)
    p = Proc(argv, tmp_path / ("%s-%d-%d.log" % (name, port, len(procs))))
    procs.append(p)
    p.url, p.port, p.name, p.stats = url, port, name, stats
    wait_until(lambda: (not p.alive()) or try_mmi(ctx, url, b"echo") is not None, 15, what="%s serving" % name)
    assert p.alive(), "%s exited: %s" % (name, p.log_tail())
    return p


def store_stats(broker):
    """The broker's own figures of the store, from one stats snapshot (valid against its schema)."""
    result = subprocess.run([QUIRE_BIN, "stats", "--once", "--json", "--stats", broker.stats], capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr
    snapshot = json.loads(result.stdout.splitlines()[0])
    SNAPSHOT.validate(snapshot)
    return snapshot["store"]


def killed(broker):
    broker.p.send_signal(signal.SIGKILL)
    broker.p.wait(timeout=5)


def schema_of(store):
    return store.rsplit("%3D", 1)[1]


def count(store, where):
    return int(psql("SELECT count(*) FROM %s.quire_jobs WHERE %s" % (schema_of(store), where)))


def log_of(p):
    return open(p.log_path, "rb").read()


def submit_all(ctx, first_url, n, switch_at=None, on_switch=None, second_url=None):
    """Submits n echo jobs with idempotency keys; at `switch_at`, calls on_switch and goes on at
    second_url, resending what had no answer. Returns {job id: the result it must have}."""
    t = Titanic(ctx, first_url)
    url = first_url
    expected, ids_by_key = {}, {}
    for n in range(n):
        key = "job-%d" % n
        payload = os.urandom(32) + key.encode()
        first = {"n": n, "job": {"idempotencyKey": key}}
        if n == switch_at:
            on_switch()
            url = second_url
            t.close()
            t = Titanic(ctx, url)
        while True:
            try:
                reply = t.ask("titanic.request", b"echo", json.dumps(first).encode(), payload, timeout=3.0)
            except AssertionError:
                reply = None
            if reply is not None and reply[0] == b"200":
                break
            # No answer, or the store lost mid-write: resend on a fresh socket; the key makes it safe.
            t.close()
            t = Titanic(ctx, url)
        job_id = reply[1]
        assert ids_by_key.setdefault(key, job_id) == job_id
        expected[job_id] = [b"200", json.dumps({"n": n}, separators=(",", ":")).encode(), payload]
    return t, expected


@pytest.mark.timeout_s(240)
def test_two_brokers_serve_one_store_and_300_jobs_survive_each_broker_sigkilled_and_restarted_three_times(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
    # At each broker an OCR worker and two echo workers (40 ms a job): the submissions outrun them, so
    # every kill finds jobs running.
    for broker in (a, b):
        procs.append(Proc([QUIRE_BIN, "worker", "ocr", "--broker", broker.url, "--threads", "1", "--heartbeat-interval-ms", str(HB_MS)],
                          tmp_path / ("ocr-%s.log" % broker.name)))
        start_echo(ctx, procs, tmp_path, broker.url, delay_ms=40)
        start_echo(ctx, procs, tmp_path, broker.url, delay_ms=40)
    for broker in (a, b):
        wait_until(lambda: try_mmi(ctx, broker.url, b"ocr") == b"200", 30, what="the OCR worker at %s" % broker.name)
    brokers = {"a": a, "b": b}
    clients = {name: Titanic(ctx, broker.url) for name, broker in brokers.items()}
    expected, ids_by_key, kills = {}, {}, []
    for n in range(300):
        # Every 40 jobs a broker is SIGKILLed, then restarted on its port while the other serves on.
        if n and n % 40 == 0 and len(kills) < 6:
            victim = "ab"[len(kills) % 2]
            killed(brokers[victim])
            kills.append(victim)
            time.sleep(0.5)
            brokers[victim] = start_store_broker(ctx, procs, tmp_path, store, "broker-" + victim, port=brokers[victim].port)
            clients[victim].close()
            clients[victim] = Titanic(ctx, brokers[victim].url)
        key = "job-%d" % n
        # Every tenth job is a page for OCR, with words of its own; the others are echoed.
        if n % 10 == 0:
            words = ["Page", "%d" % n, "survives", "brokers"]
            target, frames = b"ocr", [json.dumps({"job": {"idempotencyKey": key}}).encode(), oi.png(oi.render_lines([" ".join(words)], "sans", 40).image)]
            want = ("ocr", words)
        else:
            payload = os.urandom(32) + key.encode()
            target, frames = b"echo", [json.dumps({"n": n, "job": {"idempotencyKey": key}}).encode(), payload]
            want = [b"200", json.dumps({"n": n}, separators=(",", ":")).encode(), payload]
        # Jobs go to either broker; one that does not answer is asked again at the other, with the key.
        name = "ab"[n % 2]
        for attempt in range(20):
            try:
                reply = clients[name].ask("titanic.request", target, *frames, timeout=3.0)
            except AssertionError:
                reply = None
            if reply is not None and reply[0] == b"200":
                break
            clients[name].close()
            clients[name] = Titanic(ctx, brokers[name].url)
            name = "ba"["ab".index(name)]
        else:
            pytest.fail("job %d was never accepted" % n)
        assert ids_by_key.setdefault(key, reply[1]) == reply[1]
        expected[reply[1]] = want
    assert kills == ["a", "b"] * 3
    assert len(expected) == 300
    # Every accepted job finishes once, with its own result, and either broker answers for it.
    for job_id, want in expected.items():
        for name in "ab":
            got = clients[name].result(job_id, timeout=90)
            if isinstance(want, tuple):
                assert got[0] == b"200" and json.loads(got[1])["text"].split() == want[1], "job %s at %s: %s" % (job_id, name, fmt(got))
            else:
                assert got == want, "job %s at %s: got %s, want %s" % (job_id, name, fmt(got), fmt(want))
    for client in clients.values():
        client.close()
    assert count(store, "state = 'done'") == 300 and count(store, "true") == 300
    # The kills took jobs from the brokers' workers: those ran again, and still have one result each.
    assert count(store, "attempts >= 2") >= 1, "no kill found a job running"


@pytest.mark.timeout_s(90)
def test_any_broker_answers_for_any_job_and_jobs_wait_in_the_store_for_any_brokers_worker(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
    # A has no worker: the jobs it accepts wait in the store until B's worker appears and claims them.
    fast = start_echo(ctx, procs, tmp_path, b.url, wait=False)
    ta, tb = Titanic(ctx, a.url), Titanic(ctx, b.url)
    # The service B's worker serves is a job target at A too, once A's next pass over the store has seen it.
    wait_until(lambda: ta.submit("echo", b"probe", job={"idempotencyKey": "probe"})[0] == b"200", 10, what="echo a target at A")
    slow = start_echo(ctx, procs, tmp_path, b.url, delay_ms=3000, wait=False)
    jobs = [ta.submit_ok("echo", b"page %d" % n, job={"idempotencyKey": "any-%d" % n}) for n in range(6)]
    # A reader held at A for a job B's worker runs is answered when B finishes it.
    reply = ta.ask("titanic.reply", jobs[0], json.dumps({"waitMs": 20000}).encode(), timeout=25.0)
    assert reply == [b"200", b"{}", b"page 0"], fmt(reply)
    for n, job in enumerate(jobs):
        assert tb.result(job, timeout=30) == [b"200", b"{}", b"page %d" % n]
        assert ta.status(job)["state"] == "done"
    # A resubmission to B of a key A took is A's job.
    again = tb.submit_ok("echo", b"page 1", job={"idempotencyKey": "any-1"})
    assert again == jobs[1]
    # A close through B is a close everywhere.
    assert tb.ask("titanic.close", jobs[2]) == [b"200"]
    assert ta.ask("titanic.reply", jobs[2])[0].startswith(b"400")
    # A cancel through A ends a job B's slow worker is running; its late result does not land.
    fast.p.send_signal(signal.SIGTERM)  # it drains and says goodbye: the slow worker is B's only one
    fast.p.wait(timeout=10)
    slow_job = ta.submit_ok("echo", b"slow", job={"idempotencyKey": "slow"})
    wait_until(lambda: ta.status(slow_job)["state"] == "running", 10, what="the slow job running at B")
    cancelled = ta.ask("titanic.cancel", slow_job)
    assert cancelled[0] == b"200" and json.loads(cancelled[1])["state"] == "cancelled", fmt(cancelled)
    time.sleep(3.5)
    assert tb.status(slow_job)["state"] == "cancelled"
    ta.close()
    tb.close()
    assert slow.alive()
    # Each broker counts its own part: B's claims took every job; B let the cancelled one go (its next
    # renewal found it no longer running, or its late result was refused).
    a_store, b_store = store_stats(a), store_stats(b)
    assert a_store["kind"] == "postgresql" and a_store["claimedJobs"] == 0, a_store
    assert b_store["claimedJobs"] >= 8 and b_store["claims"] >= 1 and b_store["claimSeconds"]["count"] >= 1, b_store
    assert b_store["leasesLost"] + b_store["fencedWritesRefused"] == 1, b_store


@pytest.mark.timeout_s(60)
def test_notifications_wake_the_broker_with_an_idle_worker_and_the_reader_held_at_the_other(ctx, procs, tmp_path, store):
    # Brokers that poll once a minute: only the store's notifications can wake them sooner. A has no
    # worker; it takes echo jobs because it is told the service (as deployments name ocr).
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a", poll_ms=60000, extra=["--job-services", "echo"])
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b", poll_ms=60000)
    start_echo(ctx, procs, tmp_path, b.url)
    ta = Titanic(ctx, a.url)
    for n in range(5):
        started = time.monotonic()
        job = ta.submit_ok("echo", b"woken %d" % n, job={"idempotencyKey": "woken-%d" % n})
        # B claims it at A's commit (work notified) and A's reader hears the result at B's (done notified).
        reply = ta.ask("titanic.reply", job, json.dumps({"waitMs": 20000}).encode(), timeout=25.0)
        assert reply == [b"200", b"{}", b"woken %d" % n], fmt(reply)
        assert time.monotonic() - started < 5, "woken by the notifications, not the minute's poll"
    ta.close()


@pytest.mark.timeout_s(90)
def test_a_broker_whose_session_ends_pauses_jobs_and_serves_again_by_itself(ctx, procs, tmp_path, store):
    a_store = store + "&application_name=quire-a"
    a = start_store_broker(ctx, procs, tmp_path, a_store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
    start_echo(ctx, procs, tmp_path, a.url, delay_ms=20)
    start_echo(ctx, procs, tmp_path, b.url, delay_ms=20)
    t, expected = submit_all(ctx, a.url, 20)
    t.close()
    # The database ends A's sessions: a failover, an administrator, a network cut the server noticed.
    psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quire-a'")
    # A learns it at its next use of the store (a renewal, its pass, a submission) and pauses durable
    # jobs while it connects again; B serves on. A submission meanwhile is refused with its type.
    t = Titanic(ctx, a.url)
    reply = t.ask("titanic.request", b"echo", b"{}", b"late", timeout=5.0)
    assert reply[0] in (b"200", b"500 storage_failure", b"500 service_unavailable"), fmt(reply)
    wait_until(lambda: b"lost the job store" in log_of(a), 15, what="A noticing the lost session")
    wait_until(lambda: b"durable jobs resumed" in log_of(a), 20, what="A serving again")
    assert t.ask("mmi.service", b"echo") == [b"200"], "direct requests and MMI were served all along"
    more = t.submit_ok("echo", b"after", job={"idempotencyKey": "after"})
    for job_id, want in expected.items():
        assert t.result(job_id, timeout=30) == want
    assert t.result(more, timeout=30) == [b"200", b"{}", b"after"]
    t.close()
    assert a.alive() and b.alive()


@pytest.mark.timeout_s(90)
def test_postgresql_restarted_under_load_both_brokers_reconnect_and_nothing_accepted_is_lost(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
    start_echo(ctx, procs, tmp_path, a.url, delay_ms=2)
    start_echo(ctx, procs, tmp_path, b.url, delay_ms=2)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    restarter = threading.Thread(target=lambda: subprocess.run(
        [os.path.join(repo, "scripts", "test-postgres"), "restart", server()], check=True, timeout=90))

    # Submissions go on while the server goes down and up: each is answered 200 only once committed;
    # one that meets the restart gets a typed 500 (or no answer) and is sent again with its key.
    t, expected = submit_all(ctx, a.url, 300, switch_at=30, on_switch=restarter.start, second_url=a.url)
    restarter.join()
    for job_id, want in expected.items():
        reply = t.result(job_id, timeout=60)
        assert reply == want, "job %s: got %s, want %s" % (job_id, fmt(reply), fmt(want))
    t.close()
    for broker in (a, b):
        assert broker.alive(), "%s reconnected by itself" % broker.name
        wait_until(lambda: b"durable jobs resumed" in log_of(broker), 20, what="%s resuming" % broker.name)
        assert b"lost the job store" in log_of(broker), broker.log_tail()


@pytest.mark.timeout_s(120)
def test_the_stores_disk_full_gives_typed_errors_never_a_false_200_and_service_comes_back(ctx, procs, tmp_path):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(repo, "scripts", "test-postgres")
    small = subprocess.run([script, "start", "--tmpfs", "96"], check=True, capture_output=True, text=True, timeout=90).stdout.strip()
    try:
        folder = small.split("host=", 1)[1]
        a = start_store_broker(ctx, procs, tmp_path, small, "broker")
        start_echo(ctx, procs, tmp_path, a.url)
        # The disk all but full: a filler leaves about 6 MB, some 60 jobs of 100 KB with their results.
        stat = os.statvfs(folder)
        free_mb = stat.f_bavail * stat.f_frsize // (1 << 20)
        with open(os.path.join(folder, "filler"), "wb") as f:
            f.write(b"\0" * ((free_mb - 6) << 20))
        t = Titanic(ctx, a.url)
        accepted, refusal = {}, None
        for n in range(400):
            payload = os.urandom(100_000)
            reply = t.ask("titanic.request", b"echo", json.dumps({"job": {"idempotencyKey": "full-%d" % n}}).encode(), payload, timeout=10.0)
            if reply[0] != b"200":
                refusal = reply
                break
            accepted[reply[1]] = payload
        assert refusal is not None, "400 jobs of 100 KB fitted in 6 MB?"
        assert refusal[0] == b"500 storage_failure" and b"full" in refusal[1], fmt(refusal)
        assert len(accepted) > 5
        # Space comes back: the same broker, with no restart, accepts and finishes jobs again.
        os.remove(os.path.join(folder, "filler"))
        for n in range(400, 420):
            payload = os.urandom(100_000)
            reply = t.ask("titanic.request", b"echo", json.dumps({"job": {"idempotencyKey": "full-%d" % n}}).encode(), payload, timeout=10.0)
            assert reply[0] == b"200", fmt(reply)
            accepted[reply[1]] = payload
        # Every job answered 200, before the disk filled or after, finishes with its own bytes.
        for job_id, payload in accepted.items():
            assert t.result(job_id, timeout=30) == [b"200", b"{}", payload]
        t.close()
        assert a.alive()
    finally:
        subprocess.run([script, "stop", small], timeout=60)


def test_bad_and_unreachable_stores_are_refused_with_the_reason_and_no_password(tmp_path):
    bad = subprocess.run([QUIRE_BIN, "broker", "--bind", "tcp://127.0.0.1:%d" % free_port(), "--store", "mysql://x/y"],
                         capture_output=True, text=True, timeout=20)
    assert bad.returncode == 2 and "postgresql://" in bad.stderr, bad.stderr
    capped = subprocess.run([QUIRE_BIN, "broker", "--store", server(), "--max-store-bytes", "100000"],
                            capture_output=True, text=True, timeout=20)
    assert capped.returncode == 2 and "SQLite" in capped.stderr, capped.stderr
    gone = subprocess.run([QUIRE_BIN, "broker", "--bind", "tcp://127.0.0.1:%d" % free_port(), "--auth", "off", "--store",
                           "postgresql://quire:s3cret@/quire?host=/nonexistent-quire-dir&connect_timeout=2"],
                          capture_output=True, text=True, timeout=20)
    assert gone.returncode == 1, gone.stderr
    assert "nonexistent-quire-dir" in gone.stderr and "s3cret" not in gone.stderr + gone.stdout


def quire(*args, timeout=60):
    return subprocess.run([QUIRE_BIN] + list(args), capture_output=True, timeout=timeout)


@pytest.mark.timeout_s(90)
def test_a_client_and_a_worker_naming_both_brokers_move_to_the_other_when_one_is_gone(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
    both = "%s,%s" % (a.url, b.url)
    worker = Proc([QUIRE_BIN, "worker", "echo", "--broker", both, "--heartbeat-interval-ms", str(HB_MS),
                   "--heartbeat-liveness", str(LIVENESS)], tmp_path / "echo-both.log")
    procs.append(worker)
    wait_until(lambda: try_mmi(ctx, a.url, b"echo") == b"200", 10, what="the worker at A")
    page = tmp_path / "page.txt"
    page.write_bytes(b"before A went")
    before = quire("submit", str(page), "--service", "echo", "--broker", both, "--idempotency-key", "before")
    assert before.returncode == 0, before.stderr
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(timeout=5)
    # The CLI finds the broker that answers (A is silent: B, after a 3 s probe) and the worker moves
    # to B once A's heartbeats stop: neither is told anything. What A held goes back to the queue once
    # its lease runs out.
    page.write_bytes(b"after A went")
    after = quire("submit", str(page), "--service", "echo", "--broker", both, "--idempotency-key", "after")
    assert after.returncode == 0, after.stderr
    t = Titanic(ctx, b.url)
    for job, text in ((before.stdout.strip(), b"before A went"), (after.stdout.strip(), b"after A went")):
        got = quire("result", job.decode(), "--wait", "--wait-timeout-s", "30", "--broker", both)
        assert got.returncode == 0, got.stderr
        # The echo worker sent back what was submitted: the options frame the CLI prints, and the file.
        assert t.result(job, timeout=5) == [b"200", b"{}", text]
    t.close()
    log = open(worker.log_path, "rb").read()
    assert b'"broker":"%s"' % b.url.encode() in log and b"worker ready" in log


def privileged(argv):
    """argv as root: as it is when the tests run as root, else through sudo (as scripts/install-deps)."""
    return argv if os.geteuid() == 0 else ["sudo", "-n"] + argv


class CuttableProxy:
    """TCP on loopback in front of the test server's Unix socket, whose link can be cut silently: its
    port's packets dropped (iptables), and the server's side of the sessions closed as the server's own
    keepalives would close them. The broker on the far side hears nothing at all."""

    def __init__(self, socket_path):
        import socket as sockets
        self.socket_path = socket_path
        self.listener = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
        self.listener.setsockopt(sockets.SOL_SOCKET, sockets.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.upstreams = []
        self.rules = [["INPUT", "-i", "lo", "-p", "tcp", "--dport", str(self.port), "-j", "DROP"],
                      ["INPUT", "-i", "lo", "-p", "tcp", "--sport", str(self.port), "-j", "DROP"]]
        self.cut_on = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket as sockets
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
            upstream.connect(self.socket_path)
            self.upstreams.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass

    def cut(self):
        for rule in self.rules:
            subprocess.run(privileged(["iptables", "-I"] + rule), check=True, timeout=10)
        self.cut_on = True
        for upstream in self.upstreams:
            try:
                upstream.shutdown(2)
                upstream.close()
            except OSError:
                pass
        self.upstreams = []

    def mend(self):
        if self.cut_on:
            for rule in self.rules:
                subprocess.run(privileged(["iptables", "-D"] + rule), check=False, timeout=10)
            self.cut_on = False

    def close(self):
        self.mend()
        self.listener.close()


@pytest.mark.timeout_s(150)
def test_a_broker_cut_off_silently_stops_taking_jobs_the_other_finishes_its_jobs_after_the_lease_and_its_late_write_is_refused(
        ctx, procs, tmp_path, store):
    folder = server().split("host=", 1)[1].split("&", 1)[0]
    proxy = CuttableProxy(os.path.join(folder, ".s.PGSQL.5432"))
    try:
        schema_option = store.split("options=", 1)[1]
        # A reaches the store over TCP through the proxy, and notices a silent peer within ~2 s.
        a_store = ("postgresql://quire@127.0.0.1:%d/quire?sslmode=disable&options=%s&connect_timeout=2"
                   "&keepalives_idle=1&keepalives_interval=1&keepalives_count=2&tcp_user_timeout=2000") % (proxy.port, schema_option)
        a = start_store_broker(ctx, procs, tmp_path, a_store, "broker-a")
        b = start_store_broker(ctx, procs, tmp_path, store, "broker-b")
        # A's worker takes 8 s per job: it still holds the first when the link is cut.
        start_echo(ctx, procs, tmp_path, a.url, delay_ms=8000)
        t, expected = submit_all(ctx, a.url, 1)
        held = next(iter(expected))
        wait_until(lambda: t.status(held)["state"] == "running", 10, what="A's worker holding the job")
        running_since = time.monotonic()
        t.close()
        proxy.cut()
        # B's worker comes: B finishes the job A held once A's lease runs out (A cannot renew it).
        start_echo(ctx, procs, tmp_path, b.url, wait=False)
        tb = Titanic(ctx, b.url)
        assert tb.result(held, timeout=30) == expected[held]
        assert count(store, "state = 'done' AND attempts = 2") == 1, "B ran it as attempt 2"
        # A cannot commit: what it is asked to store is refused (typed), never answered 200.
        wait_until(lambda: b"lost the job store" in log_of(a), 20, what="A noticing the cut")
        t = Titanic(ctx, a.url)
        reply = t.ask("titanic.request", b"echo", b"{}", b"during the cut", timeout=10.0)
        assert reply[0] in (b"500 storage_failure", b"500 service_unavailable"), fmt(reply)
        # A's worker finishes attempt 1 while A is cut off; the link comes back and A writes it, fenced
        # by its attempt: refused, since attempt 2 finished. A serves again.
        time.sleep(max(0.0, running_since + 9.0 - time.monotonic()))
        proxy.mend()
        wait_until(lambda: b"durable jobs resumed" in log_of(a), 30, what="A serving again")
        wait_until(lambda: b"another broker holds now was refused" in log_of(a), 15, what="A's late write refused")
        assert tb.result(held, timeout=5) == expected[held], "the newer attempt's result stands"
        assert store_stats(a)["fencedWritesRefused"] == 1 and store_stats(b)["leasesExpired"] >= 1
        after = t.submit_ok("echo", b"after the cut", job={"idempotencyKey": "after-cut"})
        assert tb.result(after, timeout=30) == [b"200", b"{}", b"after the cut"]
        t.close()
        tb.close()
    finally:
        proxy.close()
