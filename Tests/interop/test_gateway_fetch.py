"""`quire gateway --fetch-allow`: image URLs fetched from an allow-list, and nothing else.

Real processes: `quire broker` + `quire worker ocr` + `quire gateway --fetch-allow` (once for the
module), and a local `http.server` that serves a rendered image, a 404, a body over the gateway's
image limit (declared and undeclared), an HTML page, redirects inside and outside the list, and a
listener that accepts and never answers. The official Azure Computer Vision client's `read(url)` and
Cloud Vision's `imageUri` read the image when its prefix is allowed; everything else gets the API's
typed error, in bounded time, and the gateway keeps serving.
Needs: PyPI azure-cognitiveservices-vision-computervision, pillow.
"""

import http.server as httpserver
import io
import socket
import threading
import time

import pytest

import ocr_images as oi
from conftest import start_gateway
from test_gateway import LINES, WORDS, callable_error, http, serves
from test_ocr import quire_bin, start_stack, zctx  # noqa: F401 (fixtures)

FETCH_TIMEOUT_MS = 2000
LIMIT = 16 << 20  # the gateway's image limit (its request body limit)
IMAGE_ANALYSIS = "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read"


@pytest.fixture(scope="module")
def png():
    buf = io.BytesIO()
    oi.render_lines(LINES, size=40).image.save(buf, format="PNG")
    return buf.getvalue()


class Images:
    """A local HTTP server with the cases; `hits` counts requests per path."""

    def __init__(self, png):
        self.png = png
        self.hits = {}
        self.headers = []
        images = self

        class Handler(httpserver.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, status, body=b"", ctype="image/png", extra=()):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in extra:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                images.hits[self.path] = images.hits.get(self.path, 0) + 1
                images.headers.append(dict(self.headers))
                p = self.path
                if p in ("/img/quire.png", "/other/quire.png"):
                    self.send(200, images.png, extra=[("Set-Cookie", "session=abc; Path=/")])
                elif p == "/img/missing.png":
                    self.send(404, b"<html>no such image, secret-page-text</html>", "text/html")
                elif p == "/img/page.html":
                    self.send(200, b"<html>secret-page-text</html>", "text/html")
                elif p == "/img/big.png":
                    self.send(200, b"\0" * (LIMIT + 1))
                elif p == "/img/endless.png":
                    # No Content-Length: the gateway must stop reading at its limit.
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    chunk = b"\0" * 65536
                    try:
                        for _ in range((LIMIT // len(chunk)) * 4):
                            self.wfile.write(chunk)
                    except OSError:
                        pass
                    self.close_connection = True
                elif p == "/img/redirect-in":
                    self.send(302, extra=[("Location", "/img/quire.png")], ctype="text/plain")
                elif p == "/img/redirect-out":
                    # localhost is not 127.0.0.1 to the allow-list: another host.
                    self.send(302, extra=[("Location", "http://localhost:%d/img/quire.png" % images.port)], ctype="text/plain")
                elif p == "/img/redirect-other-path":
                    self.send(302, extra=[("Location", "/other/quire.png")], ctype="text/plain")
                elif p == "/img/loop":
                    self.send(302, extra=[("Location", "/img/loop")], ctype="text/plain")
                else:
                    self.send(404, b"", "text/plain")

        self.server = httpserver.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        # Accepts connections and never answers.
        self.silent = socket.socket()
        self.silent.bind(("127.0.0.1", 0))
        self.silent.listen(64)
        self.silent_port = self.silent.getsockname()[1]

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def close(self):
        self.server.shutdown()
        self.silent.close()


@pytest.fixture(scope="module")
def images(png):
    i = Images(png)
    yield i
    i.close()


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory, images):
    log_dir = tmp_path_factory.mktemp("gateway-fetch")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(log_dir / "data")],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    allow = "%s,http://127.0.0.1:%d/" % (images.url("/img/"), images.silent_port)
    try:
        gateway, port = start_gateway(quire_bin, st.url, log_dir, "--fetch-allow", allow, "--fetch-timeout-ms", str(FETCH_TIMEOUT_MS))
    except BaseException:
        for p in reversed(st.processes):
            p.stop()
        raise
    try:
        st.gateway, st.port = gateway, port
        yield st
    finally:
        gateway.stop()
        for p in reversed(st.processes):
            p.stop()


def azure_error(body, code):
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
    return body["error"]["message"]


def vision(stack, url):
    return http(stack, "POST", "/v1/images:annotate", {"requests": [
        {"image": {"source": {"imageUri": url}}, "features": [{"type": "TEXT_DETECTION"}]}]})


def azure_client(stack):
    from azure.cognitiveservices.vision.computervision import ComputerVisionClient
    from msrest.authentication import CognitiveServicesCredentials
    return ComputerVisionClient("http://127.0.0.1:%d" % stack.port, CognitiveServicesCredentials("not-checked"))


# ---------------------------------------------------------------------------
# Allowed URLs are read
# ---------------------------------------------------------------------------

def test_azure_sdk_read_url_reads_the_text(stack, images):
    from azure.cognitiveservices.vision.computervision.models import OperationStatusCodes
    client = azure_client(stack)
    raw = client.read(images.url("/img/quire.png"), raw=True)
    operation_id = raw.headers["Operation-Location"].split("/")[-1]
    deadline = time.time() + 30
    while True:
        result = client.get_read_result(operation_id)
        if result.status not in (OperationStatusCodes.not_started, OperationStatusCodes.running) or time.time() > deadline:
            break
        time.sleep(0.2)
    assert result.status == OperationStatusCodes.succeeded
    assert [line.text for line in result.analyze_result.read_results[0].lines] == LINES
    # Nothing of the client's request went on to the image server: no key, no cookie.
    sent = images.headers[-1]
    assert not any(k.lower() in ("ocp-apim-subscription-key", "authorization", "cookie") for k in sent), sent


def test_cloud_vision_image_uri_reads_the_text(stack, images):
    status, _, body = vision(stack, images.url("/img/quire.png"))
    assert status == 200, body
    (r,) = body["responses"]
    assert r["textAnnotations"][0]["description"].split() == WORDS
    # The cookie the server set is not kept: the next fetch sends none.
    vision(stack, images.url("/img/quire.png"))
    assert "Cookie" not in images.headers[-1] and "cookie" not in images.headers[-1]


def test_a_redirect_inside_the_list_is_followed(stack, images):
    status, _, body = vision(stack, images.url("/img/redirect-in"))
    assert status == 200, body
    assert body["responses"][0]["textAnnotations"][0]["description"].split() == WORDS


def test_image_analysis_url_reads_the_text(stack, images):
    status, _, body = http(stack, "POST", IMAGE_ANALYSIS, {"url": images.url("/img/quire.png")})
    assert status == 200, body
    assert [line["text"] for line in body["readResult"]["blocks"][0]["lines"]] == LINES


# ---------------------------------------------------------------------------
# Everything else: the API's typed error, bounded in time, the gateway still serving
# ---------------------------------------------------------------------------

REFUSED = [
    # (path, Azure's words, Cloud Vision: None = the call's 400, else the image's error code)
    ("/other/quire.png", "allow-list", None),
    ("/img/missing.png", "HTTP 404", 14),
    ("/img/page.html", "not an image", 3),
    ("/img/big.png", "larger than", 3),
    ("/img/endless.png", "larger than", 3),
    ("/img/redirect-out", "redirects to a URL that is not on", 7),
    ("/img/redirect-other-path", "redirects to a URL that is not on", 7),
    ("/img/loop", "more than 3 redirects", 14),
]


@pytest.mark.parametrize("path, words, code", REFUSED)
def test_urls_not_fetched_get_each_apis_typed_error(stack, images, png, path, words, code):
    url = images.url(path)
    from azure.cognitiveservices.vision.computervision.models import ComputerVisionOcrErrorException
    with pytest.raises(ComputerVisionOcrErrorException) as raised:
        azure_client(stack).read(url)
    assert raised.value.response.status_code == 400
    message = azure_error(raised.value.response.json(), "InvalidImageUrl")
    assert words in message, message
    assert "secret-page-text" not in message

    status, _, body = http(stack, "POST", IMAGE_ANALYSIS, {"url": url})
    assert status == 400, body
    assert body["error"]["code"] == "InvalidRequest" and body["error"]["innererror"]["code"] == "InvalidImageUrl", body
    assert words in body["error"]["message"]

    status, _, body = vision(stack, url)
    if code is None:
        assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT", body
        assert "allow-list" in body["error"]["message"]
    else:
        assert status == 200, body
        error = body["responses"][0]["error"]
        assert error["code"] == code, body
        assert words in error["message"] and "secret-page-text" not in error["message"]

    status, _, body = http(stack, "POST", "/annotateImage", {"data": {"image": {"source": {"imageUri": url}},
                                                                      "features": {"type": "TEXT_DETECTION"}}})
    assert status in (400, 403, 503), body
    assert words in callable_error(body, {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 503: "UNAVAILABLE"}[status])
    serves(stack, png)


def test_a_server_that_never_answers_is_cut_off_at_the_timeout(stack, images, png):
    url = "http://127.0.0.1:%d/img.png" % images.silent_port
    started = time.time()
    status, _, body = http(stack, "POST", "/vision/v3.2/read/analyze", {"url": url}, timeout=30)
    took = time.time() - started
    assert status == 400, body
    assert "within 2 s" in azure_error(body, "InvalidImageUrl")
    assert FETCH_TIMEOUT_MS / 1000 - 0.2 <= took < FETCH_TIMEOUT_MS / 1000 + 3, took

    # Several at once hold threads only until the timeout; images sent as bytes are read meanwhile.
    results = []
    threads = [threading.Thread(target=lambda: results.append(vision(stack, url))) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    serves(stack, png)
    for t in threads:
        t.join(30)
    assert len(results) == 4
    assert all(s == 200 and b["responses"][0]["error"]["code"] == 14 for s, _, b in results), results
    assert time.time() - started < 15


def test_no_allow_list_fetches_nothing_and_says_so(quire_bin, stack, images):
    gateway, port = start_gateway(quire_bin, stack.url, stack.processes[0].log_path.parent, log_name="nolist.log")
    try:
        before = images.hits.get("/img/quire.png", 0)
        st = type("S", (), {"port": port})
        status, _, body = http(st, "POST", "/vision/v3.2/read/analyze", {"url": images.url("/img/quire.png")})
        assert status == 400
        message = azure_error(body, "InvalidImageUrl")
        assert "allow-list" in message and "--fetch-allow" in message
        status, _, body = vision(st, images.url("/img/quire.png"))
        assert status == 400 and "--fetch-allow" in body["error"]["message"]
        assert images.hits.get("/img/quire.png", 0) == before
    finally:
        gateway.stop()


@pytest.mark.parametrize("prefix, words", [
    ("ftp://images.example.com/", "only http and https"),
    ("https://user@images.example.com/", "user info"),
    ("https://images.example.com/a/../b/", "'..'"),
])
def test_a_bad_prefix_stops_the_gateway_with_the_reason(quire_bin, tmp_path, prefix, words):
    import subprocess
    run = subprocess.run([quire_bin, "gateway", "--listen", "127.0.0.1:0", "--fetch-allow", "https://ok.example.com/," + prefix],
                         capture_output=True, text=True, timeout=10)
    assert run.returncode == 2, run
    assert prefix in run.stderr and words in run.stderr, run.stderr
