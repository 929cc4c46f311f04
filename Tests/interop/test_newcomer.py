"""The newcomer's trap (issue 13, item 6), with real processes: credentials in the default data folder
(as `quire up` writes them) and a broker without a token worker; a service without a worker; a broker
that is not there; the protocol's words in typed errors."""
import json
import os
import subprocess
import threading
import time

from conftest import QUIRE_BIN, REPO_ROOT, Proc, free_port, parse_error, wait_service

SAMPLE = str(REPO_ROOT / "samples" / "hello.png")
# "Within a few seconds": the client's patience is 3 s; the margin is for a loaded machine.
FEW_SECONDS = 6.0


def run(args, env, timeout=60):
    start = time.monotonic()
    r = subprocess.run([QUIRE_BIN] + list(args), capture_output=True, env=env, timeout=timeout)
    return r, time.monotonic() - start


def newcomer_env(tmp_path):
    """The environment of a machine where `quire up` (scripts/demo) ran once: its default data folder
    holds the local client's credentials."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg"))
    for name in ("QUIRE_AUTH", "QUIRE_DATA", "QUIRE_TOKEN", "QUIRE_CLIENT_ID", "QUIRE_CLIENT_SECRET", "QUIRE_TIMEOUT_MS"):
        env.pop(name, None)
    return env


def run_quire_up_once(ctx, tmp_path, env):
    url = "tcp://127.0.0.1:%d" % free_port()
    up = Proc([QUIRE_BIN, "up", "--bind", url, "--threads", "1", "--stats", "off"], tmp_path / "up.log", env=env)
    try:
        wait_service(ctx, url, b"auth.token", timeout=30)
    finally:
        assert up.stop() == 0, up.log_tail()
    credentials = tmp_path / "xdg" / "quire" / "credentials.json"
    assert set(json.loads(credentials.read_text())) >= {"client_id", "client_secret"}


def start(procs, argv, log, env):
    p = Proc([QUIRE_BIN] + argv, log, env=env)
    procs.append(p)
    return p


def test_credentials_from_quire_up_and_a_broker_with_auth_off(ctx, procs, tmp_path):
    env = newcomer_env(tmp_path)
    run_quire_up_once(ctx, tmp_path, env)
    url = "tcp://127.0.0.1:%d" % free_port()
    start(procs, ["broker", "--auth", "off", "--bind", url, "--stats", "off"], tmp_path / "broker.log", env)
    start(procs, ["worker", "ocr", "--broker", url], tmp_path / "worker.log", env)
    wait_service(ctx, url, b"ocr", timeout=30)
    r, elapsed = run(["recognize", SAMPLE, "--format", "text", "--broker", url], env)
    assert r.returncode == 0, r.stderr.decode()
    assert b"quick brown fox" in r.stdout, r
    assert elapsed < FEW_SECONDS, "recognize took %.1f s" % elapsed
    assert r.stderr == b"", r.stderr.decode()


def test_credentials_without_a_token_worker_and_auth_on_say_how_to_get_a_token(ctx, procs, tmp_path):
    env = newcomer_env(tmp_path)
    run_quire_up_once(ctx, tmp_path, env)
    url = "tcp://127.0.0.1:%d" % free_port()
    start(procs, ["broker", "--auth", "on", "--bind", url, "--stats", "off"], tmp_path / "broker.log", env)
    start(procs, ["worker", "ocr", "--broker", url], tmp_path / "worker.log", env)
    wait_service(ctx, url, b"ocr", timeout=30)
    r, elapsed = run(["recognize", SAMPLE, "--format", "text", "--broker", url], env)
    assert r.returncode == 1 and elapsed < FEW_SECONDS, (elapsed, r)
    err = r.stderr.decode()
    assert "unauthenticated" in err and "auth is on" in err and "quire worker token" in err and "--token" in err, err
    # Without any credentials the hint names where a token comes from.
    bare = dict(env, XDG_DATA_HOME=str(tmp_path / "empty"))
    r, elapsed = run(["call", "ocr", "{}", "@" + SAMPLE, "--broker", url], bare)
    assert r.returncode == 1 and elapsed < FEW_SECONDS, (elapsed, r)
    error = parse_error(r.stderr.strip().splitlines()[-1], "unauthenticated")
    assert "auth is on" in error["message"] and "--credentials" in error["message"], error


def test_a_service_without_a_worker_is_named_within_seconds(ctx, procs, tmp_path, start_echo_worker, start_broker):
    env = newcomer_env(tmp_path)
    broker = start_broker()
    r, elapsed = run(["recognize", SAMPLE, "--broker", broker.url], env)
    assert r.returncode == 1 and elapsed < FEW_SECONDS, (elapsed, r)
    assert b"service_unavailable" in r.stderr and b"no worker serves 'ocr'" in r.stderr and b"quire worker ocr" in r.stderr, r
    r, elapsed = run(["call", "echo", "x", "--broker", broker.url], env)
    assert r.returncode == 1 and elapsed < FEW_SECONDS, (elapsed, r)
    assert parse_error(r.stderr.strip().splitlines()[-1], "service_unavailable")["service"] == "echo"
    r, elapsed = run(["token", "--broker", broker.url], env)
    assert r.returncode == 1 and elapsed < FEW_SECONDS, (elapsed, r)
    assert b"no worker serves 'auth.token'" in r.stderr and b"quire worker token" in r.stderr, r
    # Asked to wait (--timeout-ms): says so, then waits as long as that.
    r, elapsed = run(["call", "echo", "x", "--broker", broker.url, "--timeout-ms", "1500", "--retries", "0"], env)
    assert r.returncode == 1 and 1.4 < elapsed < FEW_SECONDS, (elapsed, r)
    assert b"waiting for one up to 1500 ms" in r.stderr, r
    # A worker that starts while the client looks for one is found.
    result = {}
    caller = threading.Thread(target=lambda: result.update(r=run(["call", "echo", "late", "--broker", broker.url], env)))
    caller.start()
    time.sleep(0.5)
    start_echo_worker(broker)
    caller.join(30)
    r, elapsed = result["r"]
    assert r.returncode == 0 and r.stdout == b"late\n", r


def test_a_broker_that_is_not_there_is_named_within_seconds(tmp_path):
    env = newcomer_env(tmp_path)
    url = "tcp://127.0.0.1:%d" % free_port()
    for verb in (["recognize", SAMPLE], ["call", "echo", "x"], ["status", "0" * 32], ["submit", SAMPLE]):
        r, elapsed = run(verb + ["--broker", url], env)
        assert r.returncode == 1 and elapsed < FEW_SECONDS, (verb, elapsed, r)
        assert ("the broker at %s did not answer" % url).encode() in r.stderr, r


def test_ocr_request_errors_speak_the_schema(ctx, procs, tmp_path):
    env = newcomer_env(tmp_path)
    url = "tcp://127.0.0.1:%d" % free_port()
    start(procs, ["broker", "--auth", "off", "--bind", url, "--stats", "off"], tmp_path / "broker.log", env)
    start(procs, ["worker", "ocr", "--broker", url], tmp_path / "worker.log", env)
    wait_service(ctx, url, b"ocr", timeout=30)
    cases = {
        '{"mode":"weird"}': "'mode' must be one of document, text, line",
        '{"outputs":["text","docx"]}': "'outputs[1]' must be one of result, text, hocr, alto, tsv, pdf",
        '{"dpi":300.5}': "'dpi' must be an integer within 30…2400",
        '{"autoOrientation":"yes"}': "'autoOrientation' must be true or false",
    }
    for options, message in cases.items():
        r, _ = run(["call", "ocr", options, "@" + SAMPLE, "--broker", url], env)
        assert r.returncode == 1, r
        error = parse_error(r.stderr.strip().splitlines()[-1], "bad_request")
        assert error["message"] == message, error
        assert "Cannot initialize" not in error["message"] and "Index" not in error["message"]
