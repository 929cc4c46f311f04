"""CURVE on the broker's socket with the ZAP allow-list (pyzmq peers and the quire CLI).

A listed client key gets through, an unlisted key does not, plain TCP does not, and a broker with
CURVE on but no ZAP handler (no --curve-allow) refuses to start: libzmq 4.3.4 would admit anyone.
"""

import time

import pytest
import zmq

from conftest import (QUIRE_BIN, Proc, call, free_port, wait_until)
from test_auth import quire


def read_key_file(path):
    fields = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            name, value = line.split()
            fields[name] = value.encode()
    return fields


class CurveSetup:
    def __init__(self, tmp_path):
        self.dir = tmp_path
        allow = tmp_path / "allow"
        allow.mkdir()
        for name in ("server", "listed", "unlisted", "worker"):
            quire("keys", "curve", "--out", str(tmp_path / name))
        for name in ("listed", "worker"):
            (allow / (name + ".pub")).write_bytes((tmp_path / (name + ".pub")).read_bytes())
        self.allow = allow
        self.server = read_key_file(tmp_path / "server.key")

    def path(self, name, ext):
        return str(self.dir / (name + "." + ext))

    def socket(self, ctx, url, name=None):
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        if name:
            keys = read_key_file(self.dir / (name + ".key"))
            s.curve_serverkey = self.server["public"]
            s.curve_publickey = keys["public"]
            s.curve_secretkey = keys["secret"]
        s.connect(url)
        return s


def mmi_echo(sock, timeout=1.0):
    """200 when the broker answered mmi.service for echo; None when nothing came back (a refused
    connection also makes the send itself time out: there is no peer to queue for)."""
    sock.setsockopt(zmq.SNDTIMEO, int(timeout * 1000))
    try:
        sock.send_multipart([b"MDPC02", b"\x01", b"mmi.service", b"echo"])
    except zmq.Again:
        return None
    if sock.poll(int(timeout * 1000), zmq.POLLIN):
        return sock.recv_multipart()[-1]
    return None


@pytest.fixture
def curve(tmp_path):
    return CurveSetup(tmp_path)


@pytest.fixture
def curve_broker(curve, ctx, procs, tmp_path):
    url = "tcp://127.0.0.1:%d" % free_port()
    broker = Proc([QUIRE_BIN, "broker", "--bind", url, "--heartbeat-interval-ms", "250",
                   "--curve-secret-key", curve.path("server", "key"), "--curve-allow", str(curve.allow)],
                  tmp_path / "curve-broker.log")
    procs.append(broker)
    broker.url = url
    s = curve.socket(ctx, url, "listed")
    try:
        wait_until(lambda: mmi_echo(s, 0.2) is not None or not broker.alive(), 10, what="CURVE broker")
    finally:
        s.close()
    assert broker.alive(), broker.log_tail()
    return broker


def test_listed_key_gets_through_and_a_curve_worker_serves(curve, curve_broker, ctx, procs, tmp_path):
    worker = Proc([QUIRE_BIN, "worker", "echo", "--broker", curve_broker.url, "--heartbeat-interval-ms", "250",
                   "--curve-server-key", curve.path("server", "pub"), "--curve-key", curve.path("worker", "key")],
                  tmp_path / "curve-echo.log")
    procs.append(worker)
    s = curve.socket(ctx, curve_broker.url, "listed")
    try:
        wait_until(lambda: mmi_echo(s, 0.3) == b"200", 10, what="echo worker over CURVE")
        parts = call(s, "mdp02", b"echo", b"sealed", timeout=5)
        assert parts[-1] == [b"sealed"]
    finally:
        s.close()
    # The quire CLI as a CURVE client (server key given as a .pub file).
    r = quire("call", "echo", "through-curve", "--broker", curve_broker.url,
              "--curve-server-key", curve.path("server", "pub"), "--curve-key", curve.path("listed", "key"))
    assert r.stdout.decode().strip() == "through-curve"


@pytest.mark.parametrize("who", ["unlisted", None])
def test_unlisted_key_and_plain_tcp_get_nothing(curve, curve_broker, ctx, who):
    s = curve.socket(ctx, curve_broker.url, who)
    try:
        for _ in range(3):
            assert mmi_echo(s, 0.7) is None, "the broker answered a %s client" % (who or "plain")
    finally:
        s.close()
    if who:
        assert "not on the allow-list" in open(curve_broker.log_path).read()


def test_curve_without_zap_handler_refuses_to_start(curve, tmp_path):
    url = "tcp://127.0.0.1:%d" % free_port()
    r = Proc([QUIRE_BIN, "broker", "--bind", url, "--curve-secret-key", curve.path("server", "key")],
             tmp_path / "no-zap.log")
    try:
        rc = r.p.wait(timeout=10)
    finally:
        r.kill()
    assert rc == 1
    log = open(tmp_path / "no-zap.log").read()
    assert "no ZAP handler" in log, log


def test_cli_rejects_half_a_curve_configuration(curve):
    r = quire("call", "echo", "x", "--curve-key", curve.path("listed", "key"), check=False)
    assert r.returncode == 2 and b"--curve-server-key" in r.stderr
    r = quire("broker", "--curve-allow", str(curve.allow), check=False)
    assert r.returncode == 2 and b"--curve-secret-key" in r.stderr
