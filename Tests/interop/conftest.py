"""Shared fixtures and helpers for the Quire third-party interop suite.

The suite drives the real `quire` binary (broker and echo worker) from
Python: third-party Majordomo clients and workers (majortomo 0.2.0) and
hand-written pyzmq peers that put exact RFC 7 / RFC 18 frames on the wire.

Binary: $QUIRE_BIN, else <repo>/.build/debug/quire (resolved from this file).
Run:    "$(scripts/interop-venv)/bin/python" -m pytest Tests/interop -q
"""

import ctypes
import faulthandler
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import jsonschema
import pytest
import zmq

from ports import free_port  # noqa: F401 (the tests import it from here)

REPO_ROOT = Path(__file__).resolve().parents[2]
QUIRE_BIN = os.environ.get("QUIRE_BIN") or str(REPO_ROOT / ".build" / "debug" / "quire")

# Brokers and `quire up` enforce tokens by default. The suites that are not about auth run them with
# auth off (every process started here inherits this); test_auth.py and test_curve.py turn it on
# explicitly with --auth on where they need it.
os.environ["QUIRE_AUTH"] = "off"
# `quire up`'s default data folder (job store, keys, the local client's credentials) must never be this
# machine's real one: a credentials.json there would make every client verb fetch a token first.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="quire-tests-data-home-")
for _name in ("QUIRE_DATA", "QUIRE_TOKEN", "QUIRE_CLIENT_ID", "QUIRE_CLIENT_SECRET"):
    os.environ.pop(_name, None)
ERROR_SCHEMA_PATH = REPO_ROOT / "proto-json" / "error.schema.json"

# Short heartbeats keep the failure-detection tests fast: a peer is dead
# after HB_MS * LIVENESS = 1 s of silence.
HB_MS = 250
LIVENESS = 4
DEAD_AFTER_S = HB_MS * LIVENESS / 1000.0

# Per-test wall-clock limit. A test that exceeds it fails with a traceback
# (SIGALRM); if even that cannot interrupt it, faulthandler kills pytest.
TEST_TIMEOUT_S = int(os.environ.get("QUIRE_INTEROP_TEST_TIMEOUT", "45"))

# ---------------------------------------------------------------------------
# Protocol constants
# ---------------------------------------------------------------------------

MDPC01 = b"MDPC01"
MDPW01 = b"MDPW01"
MDPC02 = b"MDPC02"
MDPW02 = b"MDPW02"

# MDP/0.2 (RFC 18) client commands; majortomo uses 0x02 REQUEST, 0x03 PARTIAL, 0x04 FINAL
C02_REQUEST, C02_PARTIAL, C02_FINAL = b"\x01", b"\x02", b"\x03"
MT_REQUEST, MT_PARTIAL, MT_FINAL = b"\x02", b"\x03", b"\x04"

# worker commands per dialect
WORKER_CMDS = {
    "mdp02": dict(READY=b"\x01", REQUEST=b"\x02", PARTIAL=b"\x03", FINAL=b"\x04",
                  HEARTBEAT=b"\x05", DISCONNECT=b"\x06"),
    "majortomo": dict(READY=b"\x01", REQUEST=b"\x02", PARTIAL=b"\x03", FINAL=b"\x04",
                      HEARTBEAT=b"\x05", DISCONNECT=b"\x06"),
    # MDP/0.1 has no PARTIAL; REPLY (0x03) is final.
    "mdp01": dict(READY=b"\x01", REQUEST=b"\x02", FINAL=b"\x03",
                  HEARTBEAT=b"\x04", DISCONNECT=b"\x05"),
}
WORKER_PREFIX = {"mdp02": [], "majortomo": [b""], "mdp01": [b""]}
WORKER_HEADER = {"mdp02": MDPW02, "majortomo": MDPW02, "mdp01": MDPW01}


# ---------------------------------------------------------------------------
# Generic helpers
# ---------------------------------------------------------------------------

def _pdeathsig():
    """Child dies with us even if pytest is killed (Linux only; best effort)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def fmt(frames):
    """Readable rendering of a multipart message for assertion messages."""
    if frames is None:
        return "None"
    out = []
    for f in frames:
        if len(f) > 48:
            out.append("%r...(%d bytes)" % (f[:32], len(f)))
        else:
            out.append(repr(f))
    return "[" + ", ".join(out) + "]"


def wait_until(predicate, timeout, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %.1fs waiting for %s (last=%r)" % (timeout, what, last))


def new_dealer(ctx, url, identity=None):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    if identity is not None:
        s.setsockopt(zmq.IDENTITY, identity)
    s.connect(url)
    return s


def recv(sock, timeout=5.0, what="a reply"):
    """Receive one multipart message or fail the test after `timeout` seconds."""
    if sock.poll(int(timeout * 1000), zmq.POLLIN):
        return sock.recv_multipart()
    raise AssertionError("no message within %.1fs while waiting for %s" % (timeout, what))


def assert_silent(sock, timeout=0.3, what="socket"):
    if sock.poll(int(timeout * 1000), zmq.POLLIN):
        extra = sock.recv_multipart(zmq.NOBLOCK)
        raise AssertionError("unexpected extra message on %s: %s" % (what, fmt(extra)))


# ---------------------------------------------------------------------------
# Error replies
# ---------------------------------------------------------------------------

_schema = None


def error_schema():
    global _schema
    if _schema is None:
        with open(ERROR_SCHEMA_PATH, "rb") as f:
            _schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(_schema)
    return _schema


def parse_error(frame, code=None, context=""):
    """Parse a JSON error frame, validate it against proto-json/error.schema.json."""
    try:
        doc = json.loads(frame.decode("utf-8"))
    except Exception as exc:  # noqa: BLE001
        raise AssertionError("error frame is not UTF-8 JSON (%s): %r %s" % (exc, frame[:200], context))
    try:
        jsonschema.Draft202012Validator(error_schema()).validate(doc)
    except jsonschema.ValidationError as exc:
        raise AssertionError("error reply does not match schema: %s; doc=%r %s" % (exc.message, doc, context))
    if code is not None:
        allowed = code if isinstance(code, (set, tuple, list)) else {code}
        assert doc["error"]["code"] in allowed, "expected error code %s, got %r %s" % (
            sorted(allowed), doc, context)
    return doc["error"]


# ---------------------------------------------------------------------------
# Clients (raw frames)
# ---------------------------------------------------------------------------

def client_request_frames(dialect, service, body):
    if dialect == "mdp02":
        return [MDPC02, C02_REQUEST, service] + list(body)
    if dialect == "mdp01":
        return [b"", MDPC01, service] + list(body)
    if dialect == "majortomo":
        return [b"", MDPC02, MT_REQUEST, service] + list(body)
    raise ValueError(dialect)


def parse_client_reply(dialect, msg, service=None):
    """Return (is_final, body) for a reply in `dialect`, asserting its envelope."""
    if dialect == "mdp02":
        assert len(msg) >= 3 and msg[0] == MDPC02 and msg[1] in (C02_PARTIAL, C02_FINAL), \
            "bad MDP/0.2 client reply: %s" % fmt(msg)
        if service is not None:
            assert msg[2] == service, "reply service frame %r != %r in %s" % (msg[2], service, fmt(msg))
        return msg[1] == C02_FINAL, msg[3:]
    if dialect == "mdp01":
        assert len(msg) >= 3 and msg[0] == b"" and msg[1] == MDPC01, \
            "bad MDP/0.1 client reply: %s" % fmt(msg)
        if service is not None:
            assert msg[2] == service, "reply service frame %r != %r in %s" % (msg[2], service, fmt(msg))
        return True, msg[3:]
    if dialect == "majortomo":
        assert len(msg) >= 3 and msg[0] == b"" and msg[1] == MDPC02 and msg[2] in (MT_PARTIAL, MT_FINAL), \
            "bad majortomo client reply: %s" % fmt(msg)
        return msg[2] == MT_FINAL, msg[3:]
    raise ValueError(dialect)


def call(sock, dialect, service, *body, timeout=5.0):
    """Send one request; return the list of reply bodies (partials..., final)."""
    sock.send_multipart(client_request_frames(dialect, service, body))
    parts = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        msg = recv(sock, max(left, 0.01), what="reply to %s request for %r" % (dialect, service))
        final, b = parse_client_reply(dialect, msg, service if dialect != "majortomo" else None)
        parts.append(b)
        if final:
            return parts


def mmi(ctx, url, name, dialect="mdp02", mmi_service=b"mmi.service", timeout=2.0):
    s = new_dealer(ctx, url)
    try:
        parts = call(s, dialect, mmi_service, name, timeout=timeout)
        assert len(parts) == 1, "MMI reply had partials: %r" % parts
        return parts[0]
    finally:
        s.close(0)


def try_mmi(ctx, url, name, timeout=0.25):
    """MMI probe that returns None instead of failing (for readiness polling)."""
    s = new_dealer(ctx, url)
    try:
        s.send_multipart([MDPC02, C02_REQUEST, b"mmi.service", name])
        if s.poll(int(timeout * 1000), zmq.POLLIN):
            msg = s.recv_multipart()
            if len(msg) == 4 and msg[0] == MDPC02 and msg[1] == C02_FINAL:
                return msg[3]
            return msg
        return None
    finally:
        s.close(0)


def wait_service(ctx, url, name, code=b"200", timeout=10.0):
    return wait_until(lambda: try_mmi(ctx, url, name) == code, timeout,
                      what="mmi.service %r == %r" % (name, code))


# ---------------------------------------------------------------------------
# Raw workers
# ---------------------------------------------------------------------------

class RawWorker:
    """A synchronous hand-written Majordomo worker (no thread).

    Used for scripted protocol-violation tests; heartbeats are only sent while
    inside recv_cmd(), so keep scripted sequences well under DEAD_AFTER_S.
    """

    def __init__(self, ctx, url, dialect="mdp02", hb_ms=HB_MS):
        self.dialect = dialect
        self.cmds = WORKER_CMDS[dialect]
        self.prefix = WORKER_PREFIX[dialect]
        self.header = WORKER_HEADER[dialect]
        self.hb_s = hb_ms / 1000.0
        self.sock = new_dealer(ctx, url)
        self.last_sent = 0.0

    def send_raw(self, frames):
        self.sock.send_multipart(frames)
        self.last_sent = time.monotonic()

    def send(self, cmd, *frames):
        self.send_raw(self.prefix + [self.header, self.cmds[cmd]] + list(frames))

    def ready(self, service):
        self.send("READY", service)

    def heartbeat(self):
        self.send("HEARTBEAT")

    def partial(self, addr, *body):
        self.send("PARTIAL", addr, b"", *body)

    def final(self, addr, *body):
        self.send("FINAL", addr, b"", *body)

    def parse(self, msg):
        n = len(self.prefix)
        assert msg[:n] == self.prefix and len(msg) >= n + 2 and msg[n] == self.header, \
            "broker->%s worker message has a bad envelope: %s" % (self.dialect, fmt(msg))
        return msg[n + 1], msg[n + 2:]

    def recv_cmd(self, timeout=5.0, skip_heartbeats=True, heartbeat=True):
        """Next (command_name, frames) from the broker; sends heartbeats meanwhile."""
        names = {v: k for k, v in self.cmds.items()}
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise AssertionError("%s worker got nothing within %.1fs" % (self.dialect, timeout))
            if heartbeat and now - self.last_sent >= self.hb_s:
                self.heartbeat()
            wait = min(deadline - now, self.hb_s / 2)
            if self.sock.poll(int(wait * 1000) + 1, zmq.POLLIN):
                msg = self.sock.recv_multipart()
                cmd, frames = self.parse(msg)
                assert cmd in names, "unknown command %r from broker: %s" % (cmd, fmt(msg))
                if skip_heartbeats and names[cmd] == "HEARTBEAT":
                    continue
                return names[cmd], frames

    def recv_request(self, timeout=5.0):
        name, frames = self.recv_cmd(timeout)
        assert name == "REQUEST", "expected REQUEST, got %s %s" % (name, fmt(frames))
        assert len(frames) >= 2 and frames[1] == b"", \
            "REQUEST must be [client, empty, body...], got %s" % fmt(frames)
        return frames[0], frames[2:]

    def expect_disconnect(self, timeout=DEAD_AFTER_S * 0.7):
        """DISCONNECT must come promptly: well before heartbeat expiry could explain it.
        We send no heartbeats meanwhile (a heartbeat from a dropped worker would itself
        earn a DISCONNECT and hide a broker that ignored the violation)."""
        name, frames = self.recv_cmd(timeout, heartbeat=False)
        assert name == "DISCONNECT", "expected DISCONNECT, got %s %s" % (name, fmt(frames))
        assert frames == [], "DISCONNECT must have no further frames: %s" % fmt(frames)

    def close(self):
        self.sock.close(0)


class ThreadedWorker(threading.Thread):
    """A raw worker that runs (and heartbeats) in its own thread.

    on_request(worker, addr, body) runs in the worker thread and returns one of:
      None      keep serving (it should have replied with worker.final(...))
      "die"     close the socket at once (no DISCONNECT, no more heartbeats)
      "silent"  stay connected but never send anything again
      "disconnect"  send DISCONNECT and close
    """

    def __init__(self, ctx, url, service, on_request=None, dialect="mdp02", hb_ms=HB_MS):
        super().__init__(daemon=True)
        self.ctx, self.url, self.service = ctx, url, service
        self.on_request = on_request or (lambda w, addr, body: w.final(addr, *body))
        self.dialect = dialect
        self.hb_ms = hb_ms
        self.requests = []          # bodies received
        self.disconnected = threading.Event()
        self.stopped = threading.Event()
        self.errors = []
        self._stop_flag = threading.Event()
        self.w = None

    # called from on_request in the worker thread
    def final(self, addr, *body):
        self.w.final(addr, *body)

    def partial(self, addr, *body):
        self.w.partial(addr, *body)

    def run(self):
        w = self.w = RawWorker(self.ctx, self.url, self.dialect, self.hb_ms)
        names = {v: k for k, v in w.cmds.items()}
        mode = "serve"
        try:
            w.ready(self.service)
            while not self._stop_flag.is_set():
                if mode == "serve" and time.monotonic() - w.last_sent >= w.hb_s:
                    w.heartbeat()
                if not w.sock.poll(20, zmq.POLLIN):
                    continue
                msg = w.sock.recv_multipart()
                if mode != "serve":
                    continue
                cmd, frames = w.parse(msg)
                name = names.get(cmd)
                if name == "HEARTBEAT":
                    continue
                if name == "DISCONNECT":
                    self.disconnected.set()
                    break
                if name != "REQUEST":
                    raise AssertionError("worker got unexpected %s" % fmt(msg))
                assert len(frames) >= 2 and frames[1] == b"", "bad REQUEST %s" % fmt(msg)
                self.requests.append(frames[2:])
                action = self.on_request(self, frames[0], frames[2:])
                if action == "die":
                    break
                if action == "disconnect":
                    w.send("DISCONNECT")
                    break
                if action == "silent":
                    mode = "silent"
        except Exception as exc:  # noqa: BLE001
            self.errors.append(exc)
        finally:
            w.close()
            self.stopped.set()

    def stop(self):
        self._stop_flag.set()
        self.join(timeout=3)


# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------

class Proc:
    def __init__(self, argv, log_path, env=None):
        self.argv = argv
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
                                  env=env, preexec_fn=_pdeathsig)

    def alive(self):
        return self.p.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=5.0):
        """Send `sig`, wait up to `timeout`, then SIGKILL. Returns the exit code."""
        if self.p.poll() is None:
            try:
                self.p.send_signal(sig)
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)
        self._log.close()
        return self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if not self._log.closed:
            self._log.close()

    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            return "\n".join(lines[-n:])
        except OSError:
            return ""


def accepts(port, host="127.0.0.1"):
    """Whether something accepts TCP connections on host:port now."""
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def start_gateway(quire_bin, broker_url, log_dir, *args, log_name=None, what="the gateway to listen"):
    """`quire gateway` on a free loopback port with the extra `args`, once it accepts connections:
    (its Proc, the port). A gateway that exits or does not listen within 15 s is stopped and fails."""
    port = free_port()
    gateway = Proc([quire_bin, "gateway", "--listen", "127.0.0.1:%d" % port, "--broker", broker_url, *args],
                   log_dir / (log_name or "gateway-%d.log" % port))
    try:
        wait_until(lambda: not gateway.alive() or accepts(port), 15, what=what)
        assert gateway.alive(), gateway.log_tail()
    except BaseException:
        gateway.stop()
        raise
    return gateway, port


def _opts_to_argv(opts):
    argv = []
    for k, v in opts.items():
        if v is None:
            continue
        argv += ["--" + k.replace("_", "-"), str(v)]
    return argv


class Broker(Proc):
    def __init__(self, ctx, log_dir, **opts):
        self.ctx = ctx
        self.port = free_port()
        self.url = "tcp://127.0.0.1:%d" % self.port
        self.opts = opts
        argv = [QUIRE_BIN, "broker", "--bind", self.url] + _opts_to_argv(opts)
        super().__init__(argv, Path(log_dir) / ("broker-%d.log" % self.port))

    def wait_ready(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise AssertionError("broker exited early (rc=%s): %s\n%s" % (
                    self.p.returncode, " ".join(self.argv), self.log_tail()))
            if try_mmi(self.ctx, self.url, b"echo") is not None:
                return self
            time.sleep(0.05)
        raise AssertionError("broker not answering MMI within %.1fs\n%s" % (timeout, self.log_tail()))


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def quire_bin():
    if not (os.path.isfile(QUIRE_BIN) and os.access(QUIRE_BIN, os.X_OK)):
        pytest.fail("quire binary not found at %s (build it with `swift build`, or set QUIRE_BIN)" % QUIRE_BIN,
                    pytrace=False)
    return QUIRE_BIN


@pytest.fixture
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout_s(seconds): a longer watchdog for one test (soak tests)")


@pytest.fixture(autouse=True)
def _watchdog(request):
    """No test may hang: SIGALRM fails it, faulthandler is the last resort."""
    marker = request.node.get_closest_marker("timeout_s")
    limit = int(marker.args[0]) if marker else TEST_TIMEOUT_S

    def on_alarm(signum, frame):
        raise TimeoutError("test exceeded %ds" % limit)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    faulthandler.dump_traceback_later(limit + 20, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def procs(request, tmp_path):
    """Registry of started processes; all are killed at teardown, logs dumped on failure."""
    started = []
    yield started
    failed = any(getattr(request.node, "rep_" + w, None) is not None and
                 getattr(request.node, "rep_" + w).failed for w in ("setup", "call"))
    for p in reversed(started):
        p.kill()
    if failed:
        for p in started:
            sys.stderr.write("\n----- %s (rc=%s) -----\n%s\n" % (" ".join(p.argv), p.p.returncode, p.log_tail()))


DEFAULT_BROKER_OPTS = dict(heartbeat_interval_ms=HB_MS, heartbeat_liveness=LIVENESS, request_timeout_ms=5000)


@pytest.fixture
def start_broker(quire_bin, ctx, procs, tmp_path):
    def start(**opts):
        merged = dict(DEFAULT_BROKER_OPTS)
        merged.update(opts)
        last = None
        for _ in range(3):  # the port may be stolen between free_port() and bind
            b = Broker(ctx, tmp_path, **merged)
            procs.append(b)
            try:
                return b.wait_ready()
            except AssertionError as exc:
                last = exc
                b.kill()
        raise last
    return start


@pytest.fixture
def broker(start_broker):
    return start_broker()


@pytest.fixture
def start_echo_worker(quire_bin, ctx, procs, tmp_path):
    counter = [0]

    def start(broker, dialect=None, hb_ms=HB_MS, wait=True):
        counter[0] += 1
        argv = [quire_bin, "worker", "echo", "--broker", broker.url, "--heartbeat-interval-ms", str(hb_ms)]
        if dialect:
            argv += ["--dialect", dialect]
        p = Proc(argv, tmp_path / ("echo-worker-%d.log" % counter[0]))
        procs.append(p)
        if wait:
            wait_service(ctx, broker.url, b"echo")
        return p
    return start


@pytest.fixture
def echo_worker(broker, start_echo_worker):
    return start_echo_worker(broker)


MAJORTOMO_WORKER_SCRIPT = r"""
import sys, time
from majortomo import Worker
url, service, hb = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
w = Worker(url, service, heartbeat_interval=hb, heartbeat_timeout=10.0, zmq_linger=0)
w.connect()
while True:
    client, req = w.wait_for_request()
    if req[:1] == [b"sleep"]:
        # busy and silent: majortomo's worker sends no heartbeats while working
        time.sleep(float(req[1]))
        w.send_reply_final(client, [b"slept"] + req[1:])
    elif req[:1] == [b"stream"]:
        # one request, several reply parts
        w.send_reply_partial(client, [b"part-1"])
        w.send_reply_partial(client, [b"part-2a", b"part-2b"])
        w.send_reply_final(client, [b"done"] + req[1:])
    else:
        w.send_reply_final(client, req)
"""


@pytest.fixture
def start_majortomo_worker(ctx, procs, tmp_path):
    """Runs majortomo.Worker (third-party MDP/0.2 worker) in a subprocess."""
    counter = [0]

    def start(broker, service=b"mt-echo", hb_ms=HB_MS):
        counter[0] += 1
        argv = [sys.executable, "-c", MAJORTOMO_WORKER_SCRIPT, broker.url, service.decode(), str(hb_ms / 1000.0)]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        p = Proc(argv, tmp_path / ("majortomo-worker-%d.log" % counter[0]), env=env)
        procs.append(p)
        wait_service(ctx, broker.url, service)
        return p
    return start


@pytest.fixture
def threaded_workers():
    ws = []

    def start(w):
        ws.append(w)
        w.start()
        return w
    yield start
    for w in ws:
        w.stop()
