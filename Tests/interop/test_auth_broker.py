"""The broker enforces tokens: every protected service, before any worker sees the request.

A real `quire broker --auth on`, `quire worker token`, echo workers, and tokens minted two ways: by
the token worker (`auth.token`), and by this test with PyJWT from the signing key on disk (to make
tokens that are expired, for another audience, without a scope, or signed by an unknown key).
"""

import base64
import json
import os
import time
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from conftest import (QUIRE_BIN, Proc, call, free_port, new_dealer, parse_error, wait_service, wait_until)
from test_auth import quire


class Secure:
    def __init__(self, ctx, broker, data, tmp_path, procs):
        self.ctx, self.broker, self.data, self.tmp_path, self.procs = ctx, broker, data, tmp_path, procs

    def ask(self, service, *frames, timeout=10.0):
        s = new_dealer(self.ctx, self.broker.url)
        try:
            return call(s, "mdp02", service.encode(), *frames, timeout=timeout)[-1]
        finally:
            s.close(0)

    def add_client(self, name, scope):
        r = quire("clients", "add", name, "--scope", scope, "--json", "--data", str(self.data))
        return json.loads(r.stdout)

    def token(self, client, scope=None):
        fields = dict(grant_type="client_credentials", client_id=client["client_id"], client_secret=client["client_secret"])
        if scope:
            fields["scope"] = scope
        reply = self.ask("auth.token", json.dumps(fields).encode())
        doc = json.loads(reply[0])
        assert "access_token" in doc, doc
        return doc["access_token"]

    def signing_key(self):
        """The key that signs now: the latest that has become active (file names are random kids)."""
        keys_dir = self.data / "auth" / "keys"
        docs = [json.loads(f.read_text()) for f in keys_dir.glob("*.json")]
        active = [d for d in docs if d["activates"] <= time.time()]
        assert active, "no active signing key in %s" % keys_dir
        doc = max(active, key=lambda d: (d["activates"], d["created"]))
        seed = base64.urlsafe_b64decode(doc["seed"] + "=" * (-len(doc["seed"]) % 4))
        return doc["kid"], Ed25519PrivateKey.from_private_bytes(seed)

    def mint(self, key=None, kid=None, **overrides):
        """A token signed with PyJWT: Quire's key unless told otherwise."""
        if key is None:
            kid, key = self.signing_key()
        now = int(time.time())
        claims = dict(iss="quire", sub="pyjwt-client", aud="quire", scope="echo", iat=now, nbf=now, exp=now + 300,
                      jti=uuid.uuid4().hex)
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": kid})


@pytest.fixture
def secure(ctx, start_broker, start_echo_worker, procs, tmp_path):
    data = tmp_path / "data"
    stats = "tcp://127.0.0.1:%d" % free_port()
    broker = start_broker(auth="on", data=str(data / "broker"), job_services="echo", stats=stats, stats_interval_ms=200)
    broker.stats_url = stats
    worker = Proc([QUIRE_BIN, "worker", "token", "--broker", broker.url, "--data", str(data),
                   "--heartbeat-interval-ms", "250"], tmp_path / "token-worker.log")
    procs.append(worker)
    wait_service(ctx, broker.url, b"auth.jwks")
    start_echo_worker(broker)
    return Secure(ctx, broker, data, tmp_path, procs)


def echo(secure, token, payload=b"payload", extra=None):
    frame = dict(extra or {})
    if token is not None:
        frame["token"] = token
    return secure.ask("echo", json.dumps(frame).encode(), payload)


def test_a_valid_token_gets_through_and_never_reaches_the_worker(secure):
    client = secure.add_client("capture", "echo ocr")
    token = secure.token(client)
    reply = echo(secure, token, extra={"keep": 1})
    assert reply[-1] == b"payload"
    assert json.loads(reply[0]) == {"keep": 1}, "the broker removes the token before the worker sees the request"


def test_requests_without_a_valid_token_are_refused_with_the_right_code(secure):
    client = secure.add_client("capture", "echo")
    good = secure.token(client)
    parse_error(echo(secure, None)[0], "unauthenticated")
    parse_error(secure.ask("echo", b"not json")[0], "unauthenticated")
    # Any byte altered: header, claims or signature.
    for position in (3, len(good) // 2, len(good) - 3):
        altered = good[:position] + ("A" if good[position] != "A" else "B") + good[position + 1:]
        err = parse_error(echo(secure, altered)[0], "unauthenticated", context="byte %d" % position)
        assert "payload" not in err["message"]
    # Signed by a key the JWKS does not have (the broker refetches once, then refuses).
    stranger = Ed25519PrivateKey.generate()
    parse_error(echo(secure, secure.mint(key=stranger, kid="unknown-key"))[0], "unauthenticated")
    # Quire's key, but expired / for another audience / another issuer / without the scope / alg none.
    parse_error(echo(secure, secure.mint(exp=int(time.time()) - 3600, iat=int(time.time()) - 4000, nbf=int(time.time()) - 4000))[0], "token_expired")
    parse_error(echo(secure, secure.mint(aud="someone-else"))[0], "unauthenticated")
    parse_error(echo(secure, secure.mint(iss="evil"))[0], "unauthenticated")
    parse_error(echo(secure, secure.mint(scope="ocr"))[0], "forbidden")
    unsigned = jwt.encode(dict(iss="quire", sub="x", aud="quire", scope="echo", exp=int(time.time()) + 60), None, algorithm="none")
    parse_error(echo(secure, unsigned)[0], "unauthenticated")
    # A token PyJWT made with Quire's key and the right claims is as good as one from auth.token.
    assert echo(secure, secure.mint())[-1] == b"payload"
    # Still serving, and discovery needs no token.
    assert secure.ask("mmi.service", b"echo") == [b"200"]
    assert echo(secure, good)[-1] == b"payload"


def test_a_reader_token_reads_its_job_and_nothing_else(secure):
    capture = secure.add_client("capture", "echo")
    token = secure.token(capture)
    submitted = secure.ask("titanic.request", b"echo", json.dumps({"token": token}).encode(), b"the page")
    assert submitted[0] == b"200", submitted
    job = submitted[1]
    other = secure.ask("titanic.request", b"echo", json.dumps({"token": token}).encode(), b"another page")[1]
    exchange = dict(grant_type="urn:ietf:params:oauth:grant-type:token-exchange", subject_token=token,
                    subject_token_type="urn:ietf:params:oauth:token-type:access_token", job=job.decode())
    reader = json.loads(secure.ask("auth.token", json.dumps(exchange).encode())[0])["access_token"]
    with_reader = json.dumps({"token": reader}).encode()
    wait_until(lambda: secure.ask("titanic.reply", job, with_reader)[0] == b"200", 10, what="the job's result")
    assert secure.ask("titanic.reply", job, with_reader)[-1] == b"the page"
    assert secure.ask("titanic.status", job, with_reader)[0] == b"200"
    # Nothing else: another job, other verbs, other services.
    parse_error(secure.ask("titanic.reply", other, with_reader)[1], "forbidden")
    parse_error(secure.ask("titanic.cancel", job, with_reader)[1], "forbidden")
    parse_error(secure.ask("titanic.close", job, with_reader)[1], "forbidden")
    parse_error(secure.ask("titanic.request", b"echo", with_reader, b"x")[1], "forbidden")
    parse_error(echo(secure, reader)[0], "forbidden")
    # The submitter reads both.
    assert secure.ask("titanic.reply", other, json.dumps({"token": token}).encode())[-1] == b"another page"


def test_another_client_cannot_read_someone_elses_job(secure):
    alice = secure.token(secure.add_client("alice", "echo"))
    bob = secure.token(secure.add_client("bob", "echo"))
    job = secure.ask("titanic.request", b"echo", json.dumps({"token": alice}).encode(), b"alice's page")[1]
    as_bob = json.dumps({"token": bob}).encode()
    for service in ("titanic.reply", "titanic.status", "titanic.cancel"):
        reply = secure.ask(service, job, as_bob)
        assert reply[0] == b"400 unknown_job", (service, reply)
    assert secure.ask("titanic.close", job, as_bob) == [b"200"]  # idempotent, and changes nothing
    wait_until(lambda: secure.ask("titanic.reply", job, json.dumps({"token": alice}).encode())[0] == b"200", 10,
               what="alice's job to be done and still hers")
    # Without any token: refused before the job manager.
    parse_error(secure.ask("titanic.reply", job)[1], "unauthenticated")


def test_rate_limit_answers_rate_limited_with_retry_after(ctx, start_broker, start_echo_worker, procs, tmp_path):
    data = tmp_path / "data"
    broker = start_broker(auth="on", rate_limit=5)
    procs.append(Proc([QUIRE_BIN, "worker", "token", "--broker", broker.url, "--data", str(data), "--heartbeat-interval-ms", "250"],
                      tmp_path / "token-worker.log"))
    wait_service(ctx, broker.url, b"auth.jwks")
    start_echo_worker(broker)
    secure = Secure(ctx, broker, data, tmp_path, procs)
    token = secure.token(secure.add_client("busy", "echo"))
    s = new_dealer(ctx, broker.url)
    for n in range(30):
        s.send_multipart([b"MDPC02", b"\x01", b"echo", json.dumps({"token": token}).encode(), b"%d" % n])
    limited = []
    for n in range(30):
        assert s.poll(5000)
        msg = s.recv_multipart()
        if msg[3].startswith(b'{"error"'):
            limited.append(parse_error(msg[3], "rate_limited"))
    s.close(0)
    # A burst of 2 × 5 gets through, the rest is refused with when to come back.
    assert 15 <= len(limited) <= 20, len(limited)
    assert all(e["retryable"] and 0 < e["retry_after_ms"] <= 1000 for e in limited)
    time.sleep(0.5)
    assert echo(secure, token)[-1] == b"payload"


def test_a_rotated_key_is_fetched_when_a_token_names_it(secure):
    client = secure.add_client("capture", "echo")
    first = secure.token(client)
    assert echo(secure, first)[-1] == b"payload"
    quire("keys", "rotate", "--activate-in-s", "0", "--data", str(secure.data))
    # A key rotated within the second of the last one activates a second later.
    old_kid = jwt.get_unverified_header(first)["kid"]
    fresh = wait_until(lambda: (lambda t: t if jwt.get_unverified_header(t)["kid"] != old_kid else None)(secure.token(client)),
                       5, interval=0.2, what="a token signed by the new key")
    assert jwt.get_unverified_header(fresh)["kid"] == secure.signing_key()[0]
    assert echo(secure, fresh)[-1] == b"payload"


def test_secrets_and_tokens_never_reach_the_logs_results_or_stats(secure):
    client = secure.add_client("capture", "echo")
    token = secure.token(client)
    reply = echo(secure, token)
    echo(secure, token[:-2] + "xx")
    job = secure.ask("titanic.request", b"echo", json.dumps({"token": token}).encode(), b"page")[1]
    result = wait_until(lambda: (lambda r: r if r[0] == b"200" else None)(
        secure.ask("titanic.reply", job, json.dumps({"token": token}).encode())), 10, what="the job's result")
    snapshot = quire("stats", "--once", "--json", "--stats", secure.broker.stats_url).stdout
    for text in [b"".join(reply), b"".join(result), snapshot]:
        assert client["client_secret"].encode() not in text
        assert token.encode() not in text and token.split(".")[2].encode() not in text
    assert b'"auth"' in snapshot  # the snapshot counts auth refusals, without saying whose
    for p in secure.procs:
        log = open(p.log_path, "rb").read()
        assert client["client_secret"].encode() not in log, p.argv
        assert token.encode() not in log, p.argv
        assert token.split(".")[2].encode() not in log, p.argv


@pytest.mark.timeout_s(90)
def test_quire_up_has_auth_on_and_the_local_cli_needs_no_flags(ctx, procs, tmp_path):
    """`quire up` creates its signing key and a local client in its data folder; the CLI on the same
    machine finds them there by itself. A client without a token is refused."""
    import subprocess
    from conftest import REPO_ROOT, free_port
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    env.pop("QUIRE_AUTH", None)
    url = "tcp://127.0.0.1:%d" % free_port()
    up = Proc([QUIRE_BIN, "up", "--bind", url, "--threads", "1", "--stats", "off"], tmp_path / "up.log", env=env)
    procs.append(up)
    wait_service(ctx, url, b"ocr", timeout=30)
    wait_service(ctx, url, b"auth.jwks")
    data = tmp_path / "xdg" / "quire"
    assert oct(os.stat(data / "credentials.json").st_mode & 0o777) == "0o600"
    sample = str(REPO_ROOT / "samples" / "hello.png")

    def run(*args):
        return subprocess.run([QUIRE_BIN] + list(args) + ["--broker", url], capture_output=True, env=env, timeout=60)
    r = run("recognize", sample, "--format", "text")
    assert r.returncode == 0 and b"quick brown fox" in r.stdout, r
    r = run("submit", sample)
    assert r.returncode == 0, r
    job = r.stdout.decode().strip()
    r = run("result", job, "--wait", "--format", "text")
    assert r.returncode == 0 and b"lazy dog" in r.stdout, r
    # No token: refused before any worker sees it.
    reply = call(new_dealer(ctx, url), "mdp02", b"ocr", b"{}", b"image")[-1]
    parse_error(reply[0], "unauthenticated")


def test_a_client_with_credentials_waits_for_a_token_worker_that_is_coming_back(ctx, start_broker, start_echo_worker, procs, tmp_path):
    """A broker with auth on whose token worker is not there yet (the broker was just restarted, as in
    the compose smoke test): a verb holding credentials waits for one instead of sending its request
    without a token to be refused; with none at all it says what is missing. At a broker with auth
    off, the same credentials are not waited for."""
    import subprocess
    data = tmp_path / "data"
    broker = start_broker(auth="on")
    start_echo_worker(broker)
    client = json.loads(quire("clients", "add", "late", "--scope", "echo", "--json", "--data", str(data)).stdout)
    env = dict(os.environ, QUIRE_CLIENT_ID=client["client_id"], QUIRE_CLIENT_SECRET=client["client_secret"])

    def call_echo(url, **kwargs):
        return subprocess.Popen([QUIRE_BIN, "call", "echo", "{}", "payload", "--broker", url, "--retries", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, **kwargs)

    started = time.monotonic()
    out, err = call_echo(broker.url).communicate(timeout=30)
    assert b"unauthenticated" in err and b"auth.token" in err and b"quire worker token" in err, err
    assert 2.5 < time.monotonic() - started < 15
    assert b"payload" not in out

    waiting = call_echo(broker.url)
    time.sleep(1.0)
    procs.append(Proc([QUIRE_BIN, "worker", "token", "--broker", broker.url, "--data", str(data), "--heartbeat-interval-ms", "250"],
                      tmp_path / "token-worker.log"))
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0 and b"payload" in out, (out, err)

    open_broker = start_broker(auth="off")
    start_echo_worker(open_broker)
    started = time.monotonic()
    out, err = call_echo(open_broker.url).communicate(timeout=30)
    assert b"payload" in out, (out, err)
    assert time.monotonic() - started < 2.5, "credentials at a broker with auth off are not waited for"
