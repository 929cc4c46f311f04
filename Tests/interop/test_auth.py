"""Auth end to end: a real broker, `quire worker token`, the `quire` CLI, and third-party JWT code.

PyJWT (with `cryptography` for Ed25519) verifies Quire tokens using only the JWKS from `auth.jwks`;
the replies are validated against proto-json; errors carry RFC 6749 §5.2 codes; no secret shows up
in any log or output.
"""

import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import jsonschema
import jwt
import pytest
import zmq

from conftest import (QUIRE_BIN, REPO_ROOT, Proc, call, free_port, new_dealer, parse_error, wait_service)

SCHEMAS = REPO_ROOT / "proto-json"
_EMPTY_DATA_HOME = tempfile.mkdtemp(prefix="quire-empty-data-home-")


def schema(name):
    with open(SCHEMAS / name, "rb") as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


def validate(doc, name):
    jsonschema.Draft202012Validator(schema(name)).validate(doc)


def quire(*args, env=None, check=True):
    full_env = dict(os.environ)
    for k in ("QUIRE_TOKEN", "QUIRE_CLIENT_ID", "QUIRE_CLIENT_SECRET", "QUIRE_DATA"):
        full_env.pop(k, None)
    # The default data folder must not be this machine's real one (a `quire up` credentials file there
    # would make client verbs fetch tokens).
    full_env["XDG_DATA_HOME"] = _EMPTY_DATA_HOME
    full_env.update(env or {})
    r = subprocess.run([QUIRE_BIN] + list(args), capture_output=True, env=full_env, timeout=60)
    if check:
        assert r.returncode == 0, "quire %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.decode())
    return r


class TokenStack:
    def __init__(self, ctx, broker, worker, data, client, tmp_path):
        self.ctx, self.broker, self.worker, self.data, self.client, self.tmp_path = ctx, broker, worker, data, client, tmp_path

    def request(self, service, frame, timeout=10.0):
        s = new_dealer(self.ctx, self.broker.url)
        try:
            parts = call(s, "mdp02", service, frame, timeout=timeout)
            return parts[-1]
        finally:
            s.close()

    def token_request(self, **fields):
        reply = self.request(b"auth.token", json.dumps(fields).encode())
        assert len(reply) == 1, reply
        return json.loads(reply[0])

    def jwks(self):
        reply = self.request(b"auth.jwks", b"{}")
        doc = json.loads(reply[0])
        validate(doc, "jwks.schema.json")
        return doc

    def verify(self, token, **kwargs):
        """Verify with PyJWT, knowing nothing but the JWKS."""
        keys = jwt.PyJWKSet.from_dict(self.jwks())
        kid = jwt.get_unverified_header(token)["kid"]
        key = next(k for k in keys.keys if k.key_id == kid)
        return jwt.decode(token, key.key, algorithms=["EdDSA"], audience="quire", issuer="quire", **kwargs)

    def credentials(self):
        return dict(grant_type="client_credentials", client_id=self.client["client_id"],
                    client_secret=self.client["client_secret"])


@pytest.fixture
def stack(ctx, start_broker, procs, tmp_path):
    broker = start_broker()
    data = tmp_path / "data"
    r = quire("clients", "add", "capture", "--scope", "ocr echo", "--json", "--data", str(data))
    client = json.loads(r.stdout)
    worker = Proc([QUIRE_BIN, "worker", "token", "--broker", broker.url, "--data", str(data),
                   "--heartbeat-interval-ms", "250"], tmp_path / "token-worker.log")
    procs.append(worker)
    wait_service(ctx, broker.url, b"auth.token")
    wait_service(ctx, broker.url, b"auth.jwks")
    (tmp_path / "client.json").write_text(json.dumps(dict(client_id=client["client_id"], client_secret=client["client_secret"])))
    return TokenStack(ctx, broker, worker, data, client, tmp_path)


def test_pyjwt_verifies_a_quire_token_with_the_jwks(stack):
    reply = stack.token_request(**stack.credentials(), scope="ocr")
    validate(reply, "auth-token-response.schema.json")
    assert reply["token_type"] == "Bearer"
    assert reply["expires_in"] == 900
    assert reply["scope"] == "ocr"
    assert "refresh_token" not in reply
    header = jwt.get_unverified_header(reply["access_token"])
    assert header["alg"] == "EdDSA"
    assert header["kid"] in [k["kid"] for k in stack.jwks()["keys"]]
    claims = stack.verify(reply["access_token"])
    assert claims["sub"] == stack.client["client_id"]
    assert claims["scope"] == "ocr"
    assert claims["exp"] - claims["iat"] == 900
    assert claims["nbf"] == claims["iat"]
    assert set(claims) == {"iss", "sub", "aud", "scope", "iat", "nbf", "exp", "jti"}
    # A verifier with the wrong audience refuses it: the check is real.
    keys = jwt.PyJWKSet.from_dict(stack.jwks())
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(reply["access_token"], keys.keys[0].key, algorithms=["EdDSA"], audience="someone-else")
    # Tampering breaks the signature for PyJWT too.
    h, p, s = reply["access_token"].split(".")
    forged = jwt.utils.base64url_encode(json.dumps(dict(claims, scope="ocr admin")).encode()).decode()
    with pytest.raises(jwt.InvalidSignatureError):
        stack.verify(h + "." + forged + "." + s)


@pytest.mark.parametrize("fields,code", [
    (dict(client_secret="qs_definitely-not-the-secret"), "invalid_client"),
    (dict(client_id="qc_nobody"), "invalid_client"),
    (dict(grant_type="password"), "unsupported_grant_type"),
    (dict(grant_type="refresh_token"), "unsupported_grant_type"),
    (dict(scope="ocr admin"), "invalid_scope"),
    (dict(grant_type=None), "invalid_request"),
    (dict(client_secret=None), "invalid_request"),
    (dict(audience="elsewhere"), "invalid_request"),
])
def test_rfc6749_error_codes(stack, fields, code):
    request = stack.credentials()
    request.update(fields)
    request = {k: v for k, v in request.items() if v is not None}
    reply = stack.token_request(**request)
    error = parse_error(json.dumps(reply).encode(), code)
    assert error["retryable"] is False
    assert "qs_" not in json.dumps(reply), "a secret was echoed"


def test_not_json_is_invalid_request(stack):
    reply = stack.request(b"auth.token", b"grant_type=client_credentials")
    parse_error(reply[0], "invalid_request")


def test_reader_token_exchange(stack):
    subject = stack.token_request(**stack.credentials())["access_token"]
    reply = stack.token_request(grant_type="urn:ietf:params:oauth:grant-type:token-exchange", subject_token=subject,
                                subject_token_type="urn:ietf:params:oauth:token-type:access_token", job="J-42", expires_in=120)
    validate(reply, "auth-token-response.schema.json")
    assert reply["scope"] == "job:read"
    assert reply["expires_in"] == 120
    claims = stack.verify(reply["access_token"])
    assert claims["job"] == "J-42"
    assert claims["scope"] == "job:read"
    assert claims["sub"] == stack.client["client_id"]
    # A reader token cannot be exchanged again, and a forged subject is refused.
    again = stack.token_request(grant_type="urn:ietf:params:oauth:grant-type:token-exchange",
                                subject_token=reply["access_token"], job="J-43")
    parse_error(json.dumps(again).encode(), "invalid_grant")
    bad = stack.token_request(grant_type="urn:ietf:params:oauth:grant-type:token-exchange", subject_token=subject + "x", job="J")
    parse_error(json.dumps(bad).encode(), "invalid_grant")
    # The CLI does the same exchange.
    r = quire("token", "--broker", stack.broker.url, "--credentials", str(stack.tmp_path / "client.json"), "--job", "J-7")
    assert stack.verify(r.stdout.decode().strip())["job"] == "J-7"


def test_rotation_publishes_before_signing(stack):
    before = stack.token_request(**stack.credentials())["access_token"]
    old_kid = jwt.get_unverified_header(before)["kid"]
    r = quire("keys", "rotate", "--activate-in-s", "2", "--data", str(stack.data))
    kids = [k["kid"] for k in stack.jwks()["keys"]]
    assert len(kids) == 2 and old_kid in kids, kids
    new_kid = next(k for k in kids if k != old_kid)
    assert new_kid in r.stdout.decode()
    during = stack.token_request(**stack.credentials())["access_token"]
    assert jwt.get_unverified_header(during)["kid"] == old_kid, "a pending key signed"
    time.sleep(2.2)
    after = stack.token_request(**stack.credentials())["access_token"]
    assert jwt.get_unverified_header(after)["kid"] == new_kid
    for token in (before, during, after):
        stack.verify(token)
    listing = quire("keys", "list", "--data", str(stack.data)).stdout.decode()
    assert "%s  retired" % old_kid in listing and "%s  signing" % new_kid in listing, listing


class RecordingBroker(threading.Thread):
    """A pyzmq ROUTER standing in for the broker, to see exactly what the CLI sends: it relays
    `auth.token` to the real broker and answers anything else with the request's own frames."""

    def __init__(self, ctx, stack):
        super().__init__(daemon=True)
        self.ctx, self.stack = ctx, stack
        self.port = free_port()
        self.url = "tcp://127.0.0.1:%d" % self.port
        self.seen = []
        self.stopping = threading.Event()
        self.bound = threading.Event()

    def run(self):
        router = self.ctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind(self.url)
        self.bound.set()
        try:
            while not self.stopping.is_set():
                if not router.poll(50, zmq.POLLIN):
                    continue
                msg = router.recv_multipart()
                peer, header, command, service, body = msg[0], msg[1], msg[2], msg[3], msg[4:]
                assert header == b"MDPC02" and command == b"\x01", msg
                if service == b"auth.token":
                    reply = self.stack.request(b"auth.token", body[0])
                else:
                    self.seen.append((service, body))
                    reply = body
                router.send_multipart([peer, b"MDPC02", b"\x03", service] + reply)
        finally:
            router.close()

    def stop(self):
        self.stopping.set()
        self.join(timeout=3)


@pytest.fixture
def recording(stack, ctx):
    r = RecordingBroker(ctx, stack)
    r.start()
    r.bound.wait(5)
    yield r
    r.stop()


def test_cli_token_and_call_insert_the_token(stack, recording):
    env = dict(QUIRE_CLIENT_ID=stack.client["client_id"], QUIRE_CLIENT_SECRET=stack.client["client_secret"])
    token = quire("token", "--broker", stack.broker.url, env=env).stdout.decode().strip()
    assert stack.verify(token)["scope"] == "echo ocr"
    # quire call puts a fresh token into the first JSON frame, the rest unchanged.
    quire("call", "echo", '{"hello":"world"}', "second frame", "--broker", recording.url, env=env)
    service, body = recording.seen[-1]
    first = json.loads(body[0])
    assert service == b"echo" and body[1] == b"second frame"
    assert first["hello"] == "world"
    assert stack.verify(first["token"])["sub"] == stack.client["client_id"]
    # --token is presented as given; a frame that is not a JSON object, and mmi.*, go untouched.
    quire("call", "echo", "{}", "--broker", recording.url, "--token", token)
    assert json.loads(recording.seen[-1][1][0]) == {"token": token}
    quire("call", "echo", "plain text", "--broker", recording.url, "--token", token)
    assert recording.seen[-1][1] == [b"plain text"]
    quire("call", "mmi.service", '{"x":1}', "--broker", recording.url, "--token", token)
    assert recording.seen[-1][1] == [b'{"x":1}']
    # The data folder's credentials.json is found without flags (QUIRE_DATA here; quire up's folder by default).
    (stack.data / "credentials.json").write_text((stack.tmp_path / "client.json").read_text())
    os.chmod(stack.data / "credentials.json", 0o600)
    quire("call", "echo", "{}", "--broker", recording.url, env=dict(QUIRE_DATA=str(stack.data)))
    assert stack.verify(json.loads(recording.seen[-1][1][0])["token"])["sub"] == stack.client["client_id"]
    # No token source at all: the request goes without one.
    quire("call", "echo", "{}", "--broker", recording.url)
    assert recording.seen[-1][1] == [b"{}"]
    # Wrong credentials: exit 1 with the RFC 6749 code, the secret not repeated.
    r = quire("token", "--broker", stack.broker.url, check=False,
              env=dict(QUIRE_CLIENT_ID=stack.client["client_id"], QUIRE_CLIENT_SECRET="qs_wrong-wrong-wrong"))
    assert r.returncode == 1
    assert parse_error(r.stderr.strip().splitlines()[-1], "invalid_client")
    assert b"qs_wrong-wrong-wrong" not in r.stderr + r.stdout
    # A client verb says which client could not get a token and where its credentials come from.
    r = quire("call", "echo", "{}", "--broker", stack.broker.url, check=False,
              env=dict(QUIRE_CLIENT_ID=stack.client["client_id"], QUIRE_CLIENT_SECRET="qs_wrong-wrong-wrong"))
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "cannot get a token as client %s" % stack.client["client_id"] in err and "credentials.json" in err, err
    assert "invalid_client" in err and b"qs_wrong-wrong-wrong" not in r.stderr + r.stdout, err


def test_secrets_never_stored_or_logged(stack):
    secret = stack.client["client_secret"]
    for _ in range(3):
        stack.token_request(**stack.credentials())
    stack.token_request(**dict(stack.credentials(), client_secret=secret + "x"))
    listing = quire("clients", "list", "--json", "--data", str(stack.data)).stdout.decode()
    assert stack.client["client_id"] in listing
    registry = (stack.data / "auth" / "clients.json").read_text()
    assert "$argon2id$" in registry
    assert oct(os.stat(stack.data / "auth" / "clients.json").st_mode & 0o777) == "0o600"
    assert oct(os.stat(stack.data / "auth").st_mode & 0o777) == "0o700"
    logs = [stack.worker.log_path, stack.broker.log_path]
    texts = [Path(p).read_text(errors="replace") for p in logs]
    assert "token request" in texts[0], "the token worker logs requests"
    for text in [listing, registry] + texts:
        assert secret not in text
        assert secret[3:23] not in text
    # Removing the client takes effect at once.
    quire("clients", "remove", stack.client["client_id"], "--data", str(stack.data))
    parse_error(json.dumps(stack.token_request(**stack.credentials())).encode(), "invalid_client")


def test_cli_submit_sends_options_and_token_that_match_the_schema(stack, recording, tmp_path):
    """What `quire submit` puts on the wire: the target service, then one JSON frame with the OCR
    options, the `job` options and the token (titanic-options.schema.json), then the image."""
    image = tmp_path / "page.png"
    image.write_bytes(b"\x89PNG not really")
    quire("submit", str(image), "--broker", recording.url, "--credentials", str(stack.tmp_path / "client.json"),
          "--priority", "high", "--idempotency-key", "receipt-42", "--deadline-ms", "600000", "--max-attempts", "5",
          "--result-ttl-s", "3600", check=False)
    sent = [body for service, body in recording.seen if service == b"titanic.request"]
    assert len(sent) >= 1, recording.seen
    body = sent[0]
    assert body[0] == b"ocr" and body[2] == image.read_bytes()
    frame = json.loads(body[1])
    validate(frame, "titanic-options.schema.json")
    validate({k: v for k, v in frame.items() if k not in ("job", "token")}, "ocr-request.schema.json")
    assert frame["job"] == {"priority": "high", "idempotencyKey": "receipt-42", "deadlineMs": 600000, "maxAttempts": 5,
                            "resultTtlSeconds": 3600}
    assert stack.verify(frame["token"])["sub"] == stack.client["client_id"]
