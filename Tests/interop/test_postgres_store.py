"""Durable jobs in a PostgreSQL store that brokers on several machines share (`quire broker --store`).

One broker serves the store at a time; another started on it stands by and takes over when the first
is gone (SIGKILLed, or its database session ended), with every accepted job. The store is the test
server `scripts/test` starts (`QUIRE_TEST_POSTGRES`); each test gets a schema of its own.
"""

import json
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conftest import QUIRE_BIN, HB_MS, LIVENESS, Proc, free_port, fmt, try_mmi, wait_until
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


def start_store_broker(ctx, procs, tmp_path, store, name, serving=True):
    """A broker on `store`; waits until it serves (or, serving=False, until it says it stands by)."""
    port = free_port()
    url = "tcp://127.0.0.1:%d" % port
    argv = [QUIRE_BIN, "broker", "--bind", url, "--store", store, "--auth", "off", "--heartbeat-interval-ms", str(HB_MS),
            "--heartbeat-liveness", str(LIVENESS), "--request-timeout-ms", "5000"]
    p = Proc(argv, tmp_path / ("%s-%d.log" % (name, port)))
    procs.append(p)
    p.url, p.port = url, port
    if serving:
        wait_until(lambda: (not p.alive()) or try_mmi(ctx, url, b"echo") is not None, 15, what="%s serving" % name)
    else:
        wait_until(lambda: (not p.alive()) or b"standing by" in open(p.log_path, "rb").read(), 15, what="%s standing by" % name)
    assert p.alive(), "%s exited: %s" % (name, p.log_tail())
    return p


def lock_holder(store):
    """The server process of the session that holds the advisory lock of the broker serving `store`
    (its second key is the schema's name hashed)."""
    return psql("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid::bigint = (hashtext('%s')::bigint & 4294967295)"
                % store_schema(store))


def killed_and_taken_back(ctx, serving, standby, expected):
    """SIGKILLs the serving broker; the one that recovers a lost store (standing by for it) takes it
    back and answers every expected result. Returns a client on it."""
    serving.p.send_signal(signal.SIGKILL)
    serving.p.wait(timeout=5)
    wait_until(lambda: b"durable jobs resumed" in open(standby.log_path, "rb").read(), 20, what="the store taken back")
    t = Titanic(ctx, standby.url)
    for job_id, want in expected.items():
        assert t.result(job_id, timeout=30) == want
    return t


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


@pytest.mark.timeout_s(120)
def test_jobs_survive_the_serving_broker_sigkilled_while_a_standby_takes_over(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b", serving=False)
    assert try_mmi(ctx, b.url, b"echo") is None, "a standby does not serve"
    start_echo(ctx, procs, tmp_path, a.url, delay_ms=4)
    start_echo(ctx, procs, tmp_path, b.url, wait=False)

    def kill_a():
        a.p.send_signal(signal.SIGKILL)
        a.p.wait(timeout=5)

    t, expected = submit_all(ctx, a.url, 200, switch_at=100, on_switch=kill_a, second_url=b.url)
    assert len(expected) == 200
    for job_id, want in expected.items():
        reply = t.result(job_id, timeout=60)
        assert reply == want, "job %s: got %s, want %s" % (job_id, fmt(reply), fmt(want))
    t.close()
    log = open(b.log_path, "rb").read()
    assert log.index(b"standing by") < log.index(b"durable jobs on"), "B stood by, then served"
    assert psql("SELECT count(*) FROM quire_jobs WHERE state = 'done'".replace("quire_jobs", store_schema(store) + ".quire_jobs")) == "200"


def store_schema(store):
    return store.rsplit("%3D", 1)[1]


@pytest.mark.timeout_s(90)
def test_a_broker_whose_session_ends_pauses_jobs_stands_by_and_serves_again_when_the_other_goes(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b", serving=False)
    start_echo(ctx, procs, tmp_path, a.url)
    start_echo(ctx, procs, tmp_path, b.url, wait=False)
    t, expected = submit_all(ctx, a.url, 20)
    t.close()
    # The database ends A's session: a failover, an administrator, a network cut the server noticed.
    psql("SELECT pg_terminate_backend(%s)" % lock_holder(store))
    wait_until(lambda: try_mmi(ctx, b.url, b"echo") is not None, 15, what="the standby serving")
    # A learns it at its next write at the latest (this submission; its sweep, every 10 s, otherwise):
    # that one is told it may not be stored, and A's durable jobs pause, while it keeps serving the rest.
    t = Titanic(ctx, a.url)
    reply = t.ask("titanic.request", b"echo", b"{}", b"late", timeout=5.0)
    assert reply[0] in (b"500 storage_failure", b"500 service_unavailable"), fmt(reply)
    wait_until(lambda: b"standing by" in open(a.log_path, "rb").read(), 15, what="A standing by for the store")
    reply = t.ask("titanic.request", b"echo", b"{}", b"paused", timeout=5.0)
    assert reply[0] == b"500 service_unavailable" and b"paused" in reply[1], fmt(reply)
    assert t.ask("mmi.service", b"echo") == [b"200"], "direct requests and MMI are still served"
    assert t.ask("mmi.service", b"titanic.request") == [b"404"], "a broker recovering its store does not offer durable jobs"
    assert a.alive()
    t.close()
    # A client given both brokers asks each whether it keeps durable jobs, and submits to B.
    page = tmp_path / "page.txt"
    page.write_bytes(b"submitted while A recovers")
    cli = quire("submit", str(page), "--service", "echo", "--broker", "%s,%s" % (a.url, b.url), "--idempotency-key", "cli-1")
    assert cli.returncode == 0, cli.stderr
    via_cli = cli.stdout.decode().strip()
    t = Titanic(ctx, b.url)
    for job_id, want in expected.items():
        assert t.result(job_id, timeout=30) == want
    more = t.submit_ok("echo", b"while B serves", job={"idempotencyKey": "b-1"})
    t.close()
    # B goes: A, standing by all along, takes the store back and serves every job, B's too.
    t = killed_and_taken_back(ctx, b, a, expected)
    assert t.result(more, timeout=30) == [b"200", b"{}", b"while B serves"]
    assert t.result(via_cli.encode(), timeout=30) == [b"200", b"{}", b"submitted while A recovers"]
    t.close()


@pytest.mark.timeout_s(90)
def test_postgresql_restarted_under_load_the_broker_reconnects_and_nothing_accepted_is_lost(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker")
    start_echo(ctx, procs, tmp_path, a.url, delay_ms=2)
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
    assert a.alive(), "the broker reconnected by itself"
    log = open(a.log_path, "rb").read()
    assert b"lost the job store" in log and b"durable jobs resumed" in log, a.log_tail()


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
def test_a_client_and_a_worker_naming_both_brokers_follow_the_takeover(ctx, procs, tmp_path, store):
    a = start_store_broker(ctx, procs, tmp_path, store, "broker-a")
    b = start_store_broker(ctx, procs, tmp_path, store, "broker-b", serving=False)
    both = "%s,%s" % (a.url, b.url)
    worker = Proc([QUIRE_BIN, "worker", "echo", "--broker", both, "--heartbeat-interval-ms", str(HB_MS),
                   "--heartbeat-liveness", str(LIVENESS)], tmp_path / "echo-both.log")
    procs.append(worker)
    wait_until(lambda: try_mmi(ctx, a.url, b"echo") == b"200", 10, what="the worker at A")
    page = tmp_path / "page.txt"
    page.write_bytes(b"before the takeover")
    before = quire("submit", str(page), "--service", "echo", "--broker", both, "--idempotency-key", "before")
    assert before.returncode == 0, before.stderr
    a.p.send_signal(signal.SIGKILL)
    a.p.wait(timeout=5)
    # The CLI finds the broker that answers (A is silent: B, after a 3 s probe) and the worker moves
    # to B once A's heartbeats stop: neither is told anything.
    page.write_bytes(b"after the takeover")
    after = quire("submit", str(page), "--service", "echo", "--broker", both, "--idempotency-key", "after")
    assert after.returncode == 0, after.stderr
    t = Titanic(ctx, b.url)
    for job, text in ((before.stdout.strip(), b"before the takeover"), (after.stdout.strip(), b"after the takeover")):
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
def test_a_broker_cut_off_silently_stops_taking_jobs_the_other_finishes_them_and_it_stands_by_once_mended(ctx, procs, tmp_path, store):
    folder = server().split("host=", 1)[1].split("&", 1)[0]
    proxy = CuttableProxy(os.path.join(folder, ".s.PGSQL.5432"))
    try:
        schema_option = store.split("options=", 1)[1]
        # A reaches the store over TCP through the proxy, and notices a silent peer within ~2 s.
        a_store = ("postgresql://quire@127.0.0.1:%d/quire?sslmode=disable&options=%s&connect_timeout=2"
                   "&keepalives_idle=1&keepalives_interval=1&keepalives_count=2&tcp_user_timeout=2000") % (proxy.port, schema_option)
        a = start_store_broker(ctx, procs, tmp_path, a_store, "broker-a")
        b = start_store_broker(ctx, procs, tmp_path, store, "broker-b", serving=False)
        start_echo(ctx, procs, tmp_path, a.url, delay_ms=1500)
        start_echo(ctx, procs, tmp_path, b.url, wait=False)
        t, expected = submit_all(ctx, a.url, 4)
        t.close()
        time.sleep(0.3)  # A's worker holds the first job now
        proxy.cut()
        # The server has ended A's session: B takes the store over and finishes every job, the one
        # A's worker was reading included (its lease is B's to give out again).
        wait_until(lambda: try_mmi(ctx, b.url, b"echo") is not None, 20, what="B serving")
        t = Titanic(ctx, b.url)
        for job_id, want in expected.items():
            assert t.result(job_id, timeout=40) == want
        t.close()
        # A cannot commit: what it is asked to store is refused (typed), never answered 200, and its
        # jobs pause until it has the store again.
        t = Titanic(ctx, a.url)
        reply = t.ask("titanic.request", b"echo", b"{}", b"during the cut", timeout=10.0)
        assert reply[0] in (b"500 storage_failure", b"500 service_unavailable"), fmt(reply)
        wait_until(lambda: b"lost the job store" in open(a.log_path, "rb").read(), 20, what="A noticing the cut")
        t.close()
        # The link is back: A connects again and stands by, since B serves the store now.
        proxy.mend()
        wait_until(lambda: b"another broker serves it: standing by" in open(a.log_path, "rb").read(), 30, what="A standing by")
        killed_and_taken_back(ctx, b, a, expected).close()
    finally:
        proxy.close()
