"""Load through `quire gateway`: 32 client threads, a few hundred requests mixing synchronous Cloud
Vision and Image Analysis calls with asynchronous Azure Read 3.2 and 2.0 jobs (submit, then poll the
Operation-Location), bounded in count and time. Nothing may be lost: every request is answered, each
with the text of its own image (six different images, so a mix-up shows), every operation succeeds,
and the gateway still serves afterwards.

Real processes: `quire broker --data` + `quire worker ocr --threads 2` + `quire gateway`.
"""

import base64
import http.client as httpclient
import io
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import ocr_images as oi
from test_gateway import gateway_stack
from test_ocr import quire_bin, zctx  # noqa: F401 (fixtures)

CLIENTS = 32
REQUESTS = 256
BUDGET_S = 55
TEXTS = ["alpha bravo", "charlie delta", "echo foxtrot", "golf hotel", "india juliet", "kilo lima"]


@pytest.fixture(scope="module")
def gw(quire_bin, zctx, tmp_path_factory):
    yield from gateway_stack(quire_bin, zctx, tmp_path_factory.mktemp("gateway-load"), worker_threads=2)


@pytest.fixture(scope="module")
def images():
    out = []
    for text in TEXTS:
        buf = io.BytesIO()
        oi.render_lines([text], size=32).image.save(buf, format="PNG")
        out.append(buf.getvalue())
    return out


class Client:
    """One thread's keep-alive connection to the gateway (reopened when the server closes it)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, headers=None):
        for attempt in range(2):
            if self.conn is None:
                self.conn = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, data
            except (httpclient.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the server closed between requests: only then is a resend safe.
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def words(text):
    return text.split()


def cloud_vision(client, png):
    body = json.dumps({"requests": [{"image": {"content": base64.b64encode(png).decode()}, "features": [{"type": "TEXT_DETECTION"}]}]})
    status, _, data = client.call("POST", "/v1/images:annotate", body, {"Content-Type": "application/json"})
    assert status == 200, (status, data[:300])
    response = json.loads(data)["responses"][0]
    assert "error" not in response, response
    return response["textAnnotations"][0]["description"]


def image_analysis(client, png):
    status, _, data = client.call("POST", "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read", png,
                                  {"Content-Type": "application/octet-stream"})
    assert status == 200, (status, data[:300])
    return " ".join(line["text"] for b in json.loads(data)["readResult"]["blocks"] for line in b["lines"])


def azure_read(client, png, version, deadline):
    submit = "/vision/v3.2/read/analyze" if version == "3.2" else "/vision/v2.0/read/core/asyncBatchAnalyze"
    status, headers, data = client.call("POST", submit, png, {"Content-Type": "application/octet-stream"})
    assert status == 202, (status, data[:300])
    path = "/" + headers["operation-location"].split("/", 3)[3]
    polls = 0
    while True:
        status, _, data = client.call("GET", path)
        polls += 1
        assert status == 200, (status, data[:300])
        body = json.loads(data)
        state = body["status"].lower()
        if state == "succeeded":
            break
        assert state in ("notstarted", "running"), body
        assert time.monotonic() < deadline, "operation %s still %s after %d polls" % (path, state, polls)
        time.sleep(0.25)
    if version == "3.2":
        lines = [ln["text"] for page in body["analyzeResult"]["readResults"] for ln in page["lines"]]
    else:
        lines = [ln["text"] for result in body["recognitionResults"] for ln in result["lines"]]
    return " ".join(lines)


@pytest.mark.timeout_s(BUDGET_S + 30)
def test_many_clients_mixing_sync_and_async_calls_lose_nothing(gw, images):
    kinds = ["cloud-vision", "azure-3.2", "cloud-vision", "image-analysis", "azure-2.0", "cloud-vision", "azure-3.2", "image-analysis"]
    plan = [(i, kinds[i % len(kinds)], i % len(TEXTS)) for i in range(REQUESTS)]
    started = time.monotonic()
    deadline = started + BUDGET_S
    local = threading.local()
    clients = []
    lock = threading.Lock()
    latencies = {k: [] for k in set(kinds)}

    def run(item):
        i, kind, which = item
        if not hasattr(local, "client"):
            local.client = Client(gw.port)
            with lock:
                clients.append(local.client)
        t0 = time.monotonic()
        png = images[which]
        if kind == "cloud-vision":
            text = cloud_vision(local.client, png)
        elif kind == "image-analysis":
            text = image_analysis(local.client, png)
        else:
            text = azure_read(local.client, png, kind.split("-")[1], deadline)
        with lock:
            latencies[kind].append(time.monotonic() - t0)
        return i, kind, which, text

    failures, results = [], []
    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        futures = [pool.submit(run, item) for item in plan]
        for f in futures:
            try:
                results.append(f.result(timeout=max(1, deadline + 10 - time.monotonic())))
            except Exception as e:  # collected, reported together
                failures.append(repr(e)[:300])
    elapsed = time.monotonic() - started
    for c in clients:
        c.close()
    assert not failures, "%d of %d requests failed:\n%s" % (len(failures), REQUESTS, "\n".join(failures[:20]))
    assert len(results) == REQUESTS
    wrong = [(i, kind, TEXTS[which], text) for i, kind, which, text in results if words(text) != words(TEXTS[which])]
    assert not wrong, "answers with another image's text (or none): %r" % wrong[:10]
    assert elapsed < BUDGET_S, elapsed
    summary = ", ".join("%s %d (p50 %.2f s, max %.2f s)" % (k, len(v), sorted(v)[len(v) // 2], max(v)) for k, v in sorted(latencies.items()) if v)
    print("\n%d requests from %d clients in %.1f s (%.1f/s): %s" % (REQUESTS, CLIENTS, elapsed, REQUESTS / elapsed, summary))
    # And it keeps serving.
    after = Client(gw.port)
    try:
        assert words(cloud_vision(after, images[0])) == words(TEXTS[0])
    finally:
        after.close()
    assert gw.gateway.alive(), gw.gateway.log_tail()
