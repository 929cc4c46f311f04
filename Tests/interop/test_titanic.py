"""Durable jobs: the Titanic Service Protocol (ZeroMQ RFC 9) served by the Quire broker.

Third-party side: raw pyzmq peers speaking exact RFC 7 / RFC 18 client frames, as the zguide's
`ticlient` does, and hand-written workers. The broker under test is the real `quire broker --data`.
"""

import json
import os
import re
import signal
import subprocess
import time

import jsonschema
import pytest
import zmq

from conftest import (QUIRE_BIN, REPO_ROOT, HB_MS, LIVENESS, Proc, ThreadedWorker, call, free_port, new_dealer,
                      parse_error, try_mmi, wait_service, wait_until, fmt)

SCHEMAS = REPO_ROOT / "proto-json"
ID_RE = re.compile(rb"^[0-9a-f]{32}$")


def _schema(name):
    with open(SCHEMAS / name, "rb") as f:
        return json.load(f)


def status_validator():
    registry_error = _schema("error.schema.json")
    status = _schema("titanic-status.schema.json")
    # Resolve the $ref to error.schema.json locally.
    status["properties"]["error"] = registry_error["properties"]["error"]
    return jsonschema.Draft202012Validator(status)


class Titanic:
    """A Titanic client on one DEALER (MDP/0.2 unless told otherwise)."""

    def __init__(self, ctx, url, dialect="mdp02"):
        self.ctx, self.url, self.dialect = ctx, url, dialect
        self.sock = new_dealer(ctx, url)

    def ask(self, service, *frames, timeout=5.0):
        parts = call(self.sock, self.dialect, service.encode(), *frames, timeout=timeout)
        assert len(parts) == 1, "titanic replies are single FINAL messages: %r" % parts
        return parts[0]

    def submit(self, target, *body, job=None, first=None):
        frame = dict(first or {})
        if job:
            frame["job"] = job
        reply = self.ask("titanic.request", target.encode(), json.dumps(frame).encode(), *body)
        return reply

    def submit_ok(self, target, *body, job=None, first=None):
        reply = self.submit(target, *body, job=job, first=first)
        assert reply[0] == b"200" and len(reply) == 2 and ID_RE.match(reply[1]), "submit failed: %s" % fmt(reply)
        return reply[1]

    def status(self, job_id):
        reply = self.ask("titanic.status", job_id)
        assert reply[0] == b"200", "status failed: %s" % fmt(reply)
        doc = json.loads(reply[1])
        status_validator().validate(doc)
        return doc

    def wait_state(self, job_id, states, timeout=10.0):
        states = {states} if isinstance(states, str) else set(states)
        return wait_until(lambda: (lambda s: s if s["state"] in states else None)(self.status(job_id)), timeout,
                          what="job %s in %s" % (job_id, states))

    def result(self, job_id, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            reply = self.ask("titanic.reply", job_id)
            if reply[0] != b"300":
                return reply
            assert time.monotonic() < deadline, "job %s still pending after %.1fs" % (job_id, timeout)
            time.sleep(0.02)

    def close(self):
        self.sock.close(0)


def start_broker(ctx, procs, tmp_path, data=None, port=None, name="broker", **opts):
    port = port or free_port()
    url = "tcp://127.0.0.1:%d" % port
    argv = [QUIRE_BIN, "broker", "--bind", url, "--heartbeat-interval-ms", str(opts.pop("hb_ms", HB_MS)),
            "--heartbeat-liveness", str(LIVENESS), "--request-timeout-ms", "5000"]
    if data is not None:
        argv += ["--data", str(data)]
    for k, v in opts.items():
        argv += ["--" + k.replace("_", "-"), str(v)]
    p = Proc(argv, tmp_path / ("%s-%d-%d.log" % (name, port, len(procs))))
    procs.append(p)
    p.url, p.port = url, port
    wait_until(lambda: (not p.alive()) or try_mmi(ctx, url, b"echo") is not None, 15, what="broker up")
    assert p.alive(), "broker exited: %s" % p.log_tail()
    return p


def start_echo(ctx, procs, tmp_path, url, delay_ms=None, wait=True):
    argv = [QUIRE_BIN, "worker", "echo", "--broker", url, "--heartbeat-interval-ms", str(HB_MS)]
    if delay_ms:
        argv += ["--delay-ms", str(delay_ms)]
    p = Proc(argv, tmp_path / ("echo-%d.log" % len(procs)))
    procs.append(p)
    if wait:
        wait_service(ctx, url, b"echo")
    return p


@pytest.fixture
def jobs_broker(ctx, procs, tmp_path):
    return start_broker(ctx, procs, tmp_path, data=tmp_path / "data")


# ---------------------------------------------------------------------------
# RFC 9 exactly
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", ["mdp01", "mdp02"])
def test_rfc9_client_submits_and_fetches(ctx, procs, tmp_path, jobs_broker, dialect):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    t = Titanic(ctx, jobs_broker.url, dialect)
    # Exactly RFC 9: frame 0 the service, frames 1+ an opaque body (no JSON at all).
    reply = t.ask("titanic.request", b"echo", b"opaque \x00\xff body", b"second frame")
    assert reply[0] == b"200" and len(reply) == 2, fmt(reply)
    job_id = reply[1]
    assert ID_RE.match(job_id), "the id must be 32 hex characters: %r" % job_id
    reply = t.result(job_id)
    assert reply == [b"200", b"opaque \x00\xff body", b"second frame"]
    # titanic.reply is idempotent: the same answer again.
    assert t.ask("titanic.reply", job_id) == reply
    assert t.ask("titanic.close", job_id) == [b"200"]
    gone = t.ask("titanic.reply", job_id)
    # "The status frame contains a string formatted as three digits, optionally followed by a space
    # and descriptive text."
    assert gone[0][:3] == b"400" and gone[0][3:4] in (b"", b" "), fmt(gone)
    # close is idempotent and answers 200 for unknown ids too.
    assert t.ask("titanic.close", job_id) == [b"200"]
    assert t.ask("titanic.close", b"0" * 32) == [b"200"]
    t.close()


def test_bad_titanic_requests_get_typed_errors_and_the_broker_keeps_serving(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    t = Titanic(ctx, jobs_broker.url)
    cases = [
        (("titanic.reply", b"0123456789abcdef0123456789abcdef"), b"400", "unknown_job"),
        (("titanic.reply", b"not-an-id"), b"400", "unknown_job"),
        (("titanic.status", b"ZZ" * 16), b"400", "unknown_job"),
        (("titanic.reply",), b"400", "bad_request"),
        (("titanic.request", b"echo"), b"400", "bad_request"),
        (("titanic.request", b"no-such-service", b"x"), b"400", "unknown_service"),
        (("titanic.request", b"titanic.reply", b"x"), b"400", "unknown_service"),
        (("titanic.request", b"echo", b'{"job": {"priority": "urgent"}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"maxAttempts": 0}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"nope": 1}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": "high"}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"deadlineMs": -5}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"resultTtlSeconds": 0}}'), b"400", "bad_request"),
        # Near Int64.max: refused, not an overflow that would take the broker down.
        (("titanic.request", b"echo", b'{"job": {"resultTtlSeconds": 9223372036854775807}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"deadlineMs": 9223372036854775807}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"deadlineMs": 99999999999999999999}}'), b"400", "bad_request"),
        (("titanic.request", b"echo", b'{"job": {"priority": "high"'), b"400", "invalid_json"),
        (("titanic.frobnicate", b"x"), b"400", "unknown_service"),
    ]
    for (service, *frames), status, code in cases:
        reply = t.ask(service, *frames)
        assert reply[0].split(b" ")[0] == status, "%s %r: %s" % (service, frames, fmt(reply))
        parse_error(reply[1], code, context="%s %r" % (service, frames))
    # Still serving.
    job_id = t.submit_ok("echo", b"still here")
    assert t.result(job_id)[0] == b"200"
    t.close()


def test_broker_without_data_folder_answers_500(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=None)
    t = Titanic(ctx, broker.url)
    reply = t.ask("titanic.request", b"echo", b"x")
    assert reply[0].startswith(b"500"), fmt(reply)
    parse_error(reply[1], "service_unavailable")
    t.close()


def test_second_broker_on_the_same_data_folder_refuses_to_start(ctx, procs, tmp_path, jobs_broker):
    argv = [QUIRE_BIN, "broker", "--bind", "tcp://127.0.0.1:%d" % free_port(), "--data", str(tmp_path / "data")]
    done = subprocess.run(argv, capture_output=True, timeout=10)
    assert done.returncode == 1, done
    assert b"another broker uses the data folder" in done.stderr, done.stderr


# ---------------------------------------------------------------------------
# Nothing accepted is lost
# ---------------------------------------------------------------------------

@pytest.mark.timeout_s(150)
def test_500_jobs_survive_a_sigkilled_broker(ctx, procs, tmp_path):
    data = tmp_path / "data"
    port = free_port()
    broker = start_broker(ctx, procs, tmp_path, data=data, port=port)
    start_echo(ctx, procs, tmp_path, broker.url, delay_ms=4)
    expected = {}      # job id -> the frames its result must be
    ids_by_key = {}
    t = Titanic(ctx, broker.url)
    killed = False
    for n in range(500):
        key = "job-%d" % n
        payload = os.urandom(64) + key.encode()
        first = {"n": n, "job": {"idempotencyKey": key}}
        while True:
            try:
                reply = t.ask("titanic.request", b"echo", json.dumps(first).encode(), payload, timeout=3.0)
                break
            except AssertionError:
                # No answer: the broker is down or restarting. Resend on a fresh socket; the
                # idempotency key makes the resend safe.
                t.close()
                t = Titanic(ctx, broker.url)
        assert reply[0] == b"200", fmt(reply)
        job_id = reply[1]
        if key in ids_by_key:
            assert ids_by_key[key] == job_id
        ids_by_key[key] = job_id
        expected[job_id] = [b"200", json.dumps({"n": n}, separators=(",", ":")).encode(), payload]
        if n == 250 and not killed:
            killed = True
            broker.p.send_signal(signal.SIGKILL)
            broker.p.wait(timeout=5)
            broker = start_broker(ctx, procs, tmp_path, data=data, port=port, name="broker-restarted")
    assert len(expected) == 500
    done_at_restart = None
    seen = {}
    for job_id, want in expected.items():
        reply = t.result(job_id, timeout=60)
        assert reply == want, "job %s: got %s, want %s" % (job_id, fmt(reply), fmt(want))
        seen[job_id] = reply
    # Read again: never a different result for the same job.
    for job_id in list(expected)[::7]:
        assert t.ask("titanic.reply", job_id) == seen[job_id]
    assert done_at_restart is None
    log = open(broker.log_path, "rb").read()
    assert b"recovered durable jobs" in log, "the restarted broker should report the jobs it recovered"
    t.close()


@pytest.mark.timeout_s(60)
def test_worker_sigkilled_mid_job_the_job_completes_on_another(ctx, procs, tmp_path, jobs_broker):
    slow = start_echo(ctx, procs, tmp_path, jobs_broker.url, delay_ms=5000)
    t = Titanic(ctx, jobs_broker.url)
    job_id = t.submit_ok("echo", b"survive me")
    t.wait_state(job_id, "running")
    slow.p.send_signal(signal.SIGKILL)
    start_echo(ctx, procs, tmp_path, jobs_broker.url, wait=False)
    reply = t.result(job_id, timeout=20)
    assert reply == [b"200", b"{}", b"survive me"] or reply == [b"200", b"{ }", b"survive me"] or reply[-1] == b"survive me", fmt(reply)
    status = t.status(job_id)
    assert status["state"] == "done" and status["attempts"] == 2, status
    t.close()


def _error_worker(code, retryable):
    body = json.dumps({"error": {"code": code, "message": "scripted failure", "retryable": retryable}}).encode()

    def on_request(w, addr, frames):
        w.final(addr, body)
    return on_request


def test_a_job_that_always_fails_ends_dead_with_its_error_kept(ctx, procs, tmp_path, threaded_workers):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_retry_ms=20)
    w = threaded_workers(ThreadedWorker(ctx, broker.url, b"flaky", _error_worker("timeout", True)))
    wait_service(ctx, broker.url, b"flaky")
    t = Titanic(ctx, broker.url)
    job_id = t.submit_ok("flaky", b"x", job={"maxAttempts": 3})
    status = t.wait_state(job_id, "dead", timeout=10)
    assert status["attempts"] == 3 and status["maxAttempts"] == 3, status
    assert status["error"]["code"] == "job_dead", status
    assert "timeout" in status["error"]["message"] and "scripted failure" in status["error"]["message"], status
    assert len(w.requests) == 3
    reply = t.ask("titanic.reply", job_id)
    assert reply[0] == b"400 dead", fmt(reply)
    parse_error(reply[1], "job_dead")
    t.close()


def test_a_non_retryable_error_fails_the_job_at_once(ctx, procs, tmp_path, threaded_workers):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_retry_ms=20)
    w = threaded_workers(ThreadedWorker(ctx, broker.url, b"picky", _error_worker("not_an_image", False)))
    wait_service(ctx, broker.url, b"picky")
    t = Titanic(ctx, broker.url)
    job_id = t.submit_ok("picky", b"x")
    status = t.wait_state(job_id, "failed")
    assert status["attempts"] == 1 and status["error"]["code"] == "not_an_image", status
    reply = t.ask("titanic.reply", job_id)
    # The service answered: 200 and its own error reply, as a synchronous request would get.
    assert reply[0] == b"200", fmt(reply)
    parse_error(reply[1], "not_an_image")
    assert len(w.requests) == 1
    t.close()


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------

def test_idempotent_resubmission_returns_the_same_job(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    t = Titanic(ctx, jobs_broker.url)
    a = t.submit_ok("echo", b"one", job={"idempotencyKey": "receipt-42"})
    b = t.submit_ok("echo", b"one again", job={"idempotencyKey": "receipt-42"})
    c = t.submit_ok("echo", b"other", job={"idempotencyKey": "receipt-43"})
    assert a == b and a != c
    assert t.result(a)[-1] == b"one"
    # Still the same job once it has finished.
    assert t.submit_ok("echo", b"later", job={"idempotencyKey": "receipt-42"}) == a
    t.close()


def test_a_high_priority_job_runs_before_100_queued_low_ones(ctx, procs, tmp_path, threaded_workers):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", hb_ms=1000)

    def slow_first(w, addr, frames):
        if len(w.requests) == 1:
            time.sleep(1.5)  # the worker heartbeats every 1 s; the broker waits 4 s
        w.final(addr, *frames)
    w = threaded_workers(ThreadedWorker(ctx, broker.url, b"prio", slow_first, hb_ms=1000))
    wait_service(ctx, broker.url, b"prio")
    t = Titanic(ctx, broker.url)
    blocker = t.submit_ok("prio", b"blocker", job={"priority": "low"})
    wait_until(lambda: len(w.requests) == 1, 5, what="the blocker to start")
    # 100 low jobs, pipelined on one socket (the broker takes them in order) so that they are all
    # queued while the blocker runs.
    s = new_dealer(ctx, broker.url)
    for n in range(100):
        s.send_multipart([b"MDPC02", b"\x01", b"titanic.request", b"prio", b'{"job":{"priority":"low"}}', b"low-%d" % n])
    for n in range(100):
        assert s.poll(5000), "no answer to a low submission"
        msg = s.recv_multipart()
        assert msg[3] == b"200", fmt(msg)
    s.close(0)
    high = t.submit_ok("prio", b"HIGH", job={"priority": "high"})
    assert len(w.requests) == 1, "the low jobs must still be queued behind the blocker"
    t.result(high, timeout=10)
    order = [r[-1] for r in w.requests]
    assert order[0] == b"blocker" and order[1] == b"HIGH", order[:5]
    wait_until(lambda: len(w.requests) == 102, 10, what="every job to run")
    assert [r[-1] for r in w.requests[2:]] == [b"low-%d" % n for n in range(100)], "FIFO within a lane"
    t.result(blocker)
    t.close()


def test_deadline_expiry(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_services="later")
    t = Titanic(ctx, broker.url)
    job_id = t.submit_ok("later", b"x", job={"deadlineMs": 300})
    assert t.status(job_id)["state"] == "queued"
    status = t.wait_state(job_id, "expired", timeout=5)
    assert status["error"]["code"] == "deadline_exceeded", status
    reply = t.ask("titanic.reply", job_id)
    assert reply[0] == b"400 expired", fmt(reply)
    parse_error(reply[1], "deadline_exceeded")
    t.close()


def test_result_ttl(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    t = Titanic(ctx, jobs_broker.url)
    job_id = t.submit_ok("echo", b"short-lived", job={"resultTtlSeconds": 1})
    assert t.result(job_id)[-1] == b"short-lived"
    time.sleep(1.3)
    reply = t.ask("titanic.reply", job_id)
    assert reply[0] == b"400 unknown_job", fmt(reply)
    parse_error(reply[1], "unknown_job")
    t.close()


def test_cancel_a_queued_job(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_services="later")
    t = Titanic(ctx, broker.url)
    job_id = t.submit_ok("later", b"x")
    reply = t.ask("titanic.cancel", job_id)
    assert reply[0] == b"200" and json.loads(reply[1])["state"] == "cancelled", fmt(reply)
    reply = t.ask("titanic.reply", job_id)
    assert reply[0] == b"400 cancelled", fmt(reply)
    parse_error(reply[1], "job_cancelled")
    # Cancelling again changes nothing.
    assert json.loads(t.ask("titanic.cancel", job_id)[1])["state"] == "cancelled"
    t.close()


def test_cancel_a_running_job_discards_its_result(ctx, procs, tmp_path, threaded_workers):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", hb_ms=1000)
    released = []

    def slow(w, addr, frames):
        time.sleep(1.2)
        w.final(addr, b"too late")
        released.append(True)
    threaded_workers(ThreadedWorker(ctx, broker.url, b"slow", slow, hb_ms=1000))
    wait_service(ctx, broker.url, b"slow")
    t = Titanic(ctx, broker.url)
    job_id = t.submit_ok("slow", b"x")
    t.wait_state(job_id, "running")
    assert json.loads(t.ask("titanic.cancel", job_id)[1])["state"] == "cancelled"
    wait_until(lambda: released, 5, what="the worker to answer")
    time.sleep(0.2)
    assert t.status(job_id)["state"] == "cancelled"
    assert t.ask("titanic.reply", job_id)[0] == b"400 cancelled"
    t.close()


def test_a_full_queue_answers_busy_at_once(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_services="later", max_jobs=3)
    t = Titanic(ctx, broker.url)
    for n in range(3):
        t.submit_ok("later", b"x%d" % n)
    reply = t.submit("later", b"one too many")
    assert reply[0] == b"500 busy", fmt(reply)
    err = parse_error(reply[1], "busy")
    assert err["retryable"] is True and err["limit"] == 3
    assert try_mmi(ctx, broker.url, b"echo") is not None
    t.close()


def test_a_full_store_answers_storage_failure_and_keeps_serving(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_services="later", max_store_bytes=400_000)
    t = Titanic(ctx, broker.url)
    accepted = []
    reply = None
    for n in range(10):
        reply = t.submit("later", os.urandom(100_000))
        if reply[0] != b"200":
            break
        accepted.append(reply[1])
    assert reply[0] == b"500 storage_failure", fmt(reply)
    err = parse_error(reply[1], "storage_failure")
    assert err["retryable"] is True and "full" in err["message"]
    assert 1 <= len(accepted) < 10
    # Everything accepted is still there; closing jobs makes room again.
    for job_id in accepted:
        assert t.status(job_id)["state"] == "queued"
    for job_id in accepted:
        assert t.ask("titanic.close", job_id) == [b"200"]
    t.submit_ok("later", os.urandom(100_000))
    t.close()


def test_reply_can_wait_for_the_result(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url, delay_ms=600)
    t = Titanic(ctx, jobs_broker.url)
    job_id = t.submit_ok("echo", b"patience")
    started = time.monotonic()
    reply = t.ask("titanic.reply", job_id, b'{"waitMs": 5000}', timeout=8)
    took = time.monotonic() - started
    assert reply[0] == b"200" and reply[-1] == b"patience", fmt(reply)
    assert took < 3.0, "held for %.1fs: the answer should come when the job finishes" % took
    # A short wait on a pending job ends with 300.
    other = t.submit_ok("echo", b"slow")
    reply = t.ask("titanic.reply", other, b'{"waitMs": 100}', timeout=3)
    assert reply == [b"300"], fmt(reply)
    t.close()


# ---------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------

def run(*args, timeout=30):
    return subprocess.run([QUIRE_BIN] + list(args), capture_output=True, timeout=timeout)


def test_cli_submit_result_status_cancel_close(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    image_a, image_b = tmp_path / "a.bin", tmp_path / "b.bin"
    image_a.write_bytes(b"AAAA")
    image_b.write_bytes(b"BBBB")
    b = ["--broker", jobs_broker.url]
    done = run("submit", str(image_a), str(image_b), "--service", "echo", "--priority", "high", *b)
    assert done.returncode == 0, done.stderr
    ids = done.stdout.decode().split()
    assert len(ids) == 2 and all(ID_RE.match(i.encode()) for i in ids), done.stdout
    done = run("result", ids[0], "--wait", *b)
    assert done.returncode == 0, done.stderr
    # Echo answers the options frame first; the CLI prints the reply's first frame.
    assert json.loads(done.stdout) == {"outputs": ["result"]} or json.loads(done.stdout).get("job") is None
    status = json.loads(run("status", ids[1], *b).stdout)
    assert status["id"] == ids[1] and status["priority"] == "high"
    assert run("close", ids[0], *b).returncode == 0
    done = run("result", ids[0], *b)
    assert done.returncode == 1 and b"unknown_job" in done.stderr, done
    # A job for a service with no worker: not finished yet (exit 3), then cancelled.
    later = run("submit", str(image_a), "--service", "echo", *b)
    assert later.returncode == 0
    done = run("cancel", "zz", *b)
    assert done.returncode == 2
    done = run("result", "0" * 32, *b)
    assert done.returncode == 1
    done = run("submit", str(tmp_path / "missing.png"), *b)
    assert done.returncode == 1 and b"cannot read" in done.stderr


def test_cli_result_exit_3_while_pending_and_cancel(ctx, procs, tmp_path):
    broker = start_broker(ctx, procs, tmp_path, data=tmp_path / "data", job_services="ocr")
    image = tmp_path / "a.png"
    image.write_bytes(b"not really")
    b = ["--broker", broker.url]
    done = run("submit", str(image), "--idempotency-key", "k1", *b)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.decode().strip()
    assert run("submit", str(image), "--idempotency-key", "k1", *b).stdout.decode().strip() == job_id
    done = run("result", job_id, *b)
    assert done.returncode == 3 and b"not finished" in done.stderr, done
    done = run("result", job_id, "--wait", "--wait-timeout-s", "1", *b)
    assert done.returncode == 3, done
    done = run("cancel", job_id, *b)
    assert done.returncode == 0 and json.loads(done.stdout)["state"] == "cancelled"
    done = run("result", job_id, *b)
    assert done.returncode == 1 and b"job_cancelled" in done.stderr, done


@pytest.mark.timeout_s(90)
def test_random_titanic_requests_never_crash_the_broker(ctx, procs, tmp_path, jobs_broker):
    """Every malformed titanic.* request gets a status frame (and, when refused, a schema-valid error)."""
    import random
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    rng = random.Random(9)
    json_bits = [b'{"job": "high"}', b'{"job": []}', b'{"job": null}', b'{"job": 5}', b'{"job": {"priority": 1}}',
                 b'{"job": {"idempotencyKey": ""}}', b'{"job": {"idempotencyKey": 7}}', b'{"job": {"deadlineMs": 1.5}}',
                 b'{"job": {"maxAttempts": "3"}}', b'{"job": {"resultTtlSeconds": 99999999999}}', b'{"token": 5}',
                 b'{"waitMs": -1}', b'{"waitMs": "x"}', b'{"job": {"priority": "high"}, "job": 1}', b"[1,2]", b'"job"',
                 b"{", b"{}", b'{"job": {}}', b"\xff\xfe", b"", b'{"job": {"priority": "low"}} trailing']
    services = [b"titanic.request", b"titanic.reply", b"titanic.status", b"titanic.cancel", b"titanic.close", b"titanic."]
    t = Titanic(ctx, jobs_broker.url)
    for n in range(400):
        service = rng.choice(services)
        if service == b"titanic.request":
            frames = [rng.choice([b"echo", b"", b"x" * 300, b"mmi.service", b"titanic.request", b"\x00"])]
            frames += [rng.choice(json_bits) for _ in range(rng.randint(0, 3))]
        else:
            frames = [rng.choice([b"0" * 32, b"A" * 32, b"g" * 32, b"", b"0" * 31, os.urandom(16), b"0" * 33])]
            frames += [rng.choice(json_bits) for _ in range(rng.randint(0, 2))]
        reply = t.ask(service.decode(), *frames)
        assert reply and reply[0][:3] in (b"200", b"300", b"400", b"500"), "%r %s -> %s" % (service, fmt(frames), fmt(reply))
        if reply[0][:3] in (b"400", b"500") and len(reply) > 1:
            parse_error(reply[1], context="%r %s" % (service, fmt(frames)))
    assert try_mmi(ctx, jobs_broker.url, b"echo") == b"200"
    t.close()


def test_a_closed_job_frees_its_idempotency_key_even_in_the_same_turn(ctx, procs, tmp_path, jobs_broker):
    start_echo(ctx, procs, tmp_path, jobs_broker.url)
    t = Titanic(ctx, jobs_broker.url)
    first = t.submit_ok("echo", b"v1", job={"idempotencyKey": "k"})
    assert t.result(first)[-1] == b"v1"
    # close and resubmit pipelined on one socket: the broker takes both in one turn.
    s = new_dealer(ctx, jobs_broker.url)
    s.send_multipart([b"MDPC02", b"\x01", b"titanic.close", first])
    s.send_multipart([b"MDPC02", b"\x01", b"titanic.request", b"echo", b'{"job":{"idempotencyKey":"k"}}', b"v2"])
    replies = [s.recv_multipart() for _ in range(2) if s.poll(5000)]
    s.close(0)
    assert len(replies) == 2, replies
    closed = next(r for r in replies if r[2] == b"titanic.close")
    resubmitted = next(r for r in replies if r[2] == b"titanic.request")
    assert closed[3:] == [b"200"]
    assert resubmitted[3] == b"200" and resubmitted[4] != first, fmt(resubmitted)
    assert t.result(resubmitted[4])[-1] == b"v2"
    t.close()
