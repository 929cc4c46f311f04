"""Hostile HTTP against `quire gateway`: a few hundred cases, each answered with the imitated API's
typed error (status and error body shape), and the gateway still reads a real image afterwards.

Two corpora. The HTTP one reuses hostile_http.py's generators (the exporter's suite runs them too)
aimed at `/v1/images:annotate`: malformed request lines, methods, targets, versions, headers, bodies,
garbage, pipelining; an answer in JSON must be Google's error body, and 404, 405 and 413 must be
JSON. (Where libmicrohttpd answers on its own, before the gateway sees a request, such as a request
line it cannot parse or a head over its 64 KiB buffer, the body is libmicrohttpd's; the status is
still checked.) The API one goes through every route of every imitated API: malformed JSON, bad
base64, image URLs (never fetched), unsupported media types, a wrong type in each field of each
body, huge JSON nesting, bodies over the limit (declared and chunked), heads over the limit, chunked
abuse, truncated bodies, unknown routes and methods, and clients that send one byte a second; each
answer is checked for the exact status, the API's error shape and its code.

Real processes: `quire broker --data` + `quire worker ocr` + `quire gateway --request-timeout-ms 5000`.
"""

import base64
import io
import json
import threading
import time

import pytest

import hostile_http as hh
import ocr_images as oi
from conftest import start_gateway
from test_ocr import quire_bin, start_stack, zctx  # noqa: F401 (fixtures)

REQUEST_TIMEOUT_S = 5
MAX_BODY = 16 << 20
LINES = ["Hostile input is refused", "and reading goes on"]
WORDS = " ".join(LINES).split()

CV = "/v1/images:annotate"
FB = "/annotateImage"
FB_PROJECT = "/my-project/us-central1/annotateImage"
AR32 = "/vision/v3.2/read/analyze"
AR20 = "/vision/v2.0/read/core/asyncBatchAnalyze"
IA = "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read"


@pytest.fixture(scope="module")
def gw(quire_bin, zctx, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("gateway-hostile")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(log_dir / "data")],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    try:
        gateway, port = start_gateway(quire_bin, st.url, log_dir, "--request-timeout-ms", str(REQUEST_TIMEOUT_S * 1000))
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


@pytest.fixture(scope="module")
def png():
    buf = io.BytesIO()
    oi.render_lines(LINES, size=40).image.save(buf, format="PNG")
    return buf.getvalue()


# ---------------------------------------------------------------------------
# The imitated APIs' error bodies
# ---------------------------------------------------------------------------

GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 405: "NOT_FOUND",
                 408: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 431: "INVALID_ARGUMENT"}
CALLABLE_STATUSES = {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAUTHENTICATED", "PERMISSION_DENIED", "INTERNAL", "UNAVAILABLE"}


def family(path):
    path = path.split("?", 1)[0]
    if path.startswith("/vision/"):
        return "azure-read"
    if path.startswith("/computervision/"):
        return "image-analysis"
    if path.endswith("/annotateImage"):
        return "callable"
    return "cloud-vision"


def typed(status, headers, body, path, code=None):
    """Raises unless `body` is the error body the API of `path` answers `status` with; `code`: Google's
    status name, the callable's status, Azure Read's code, or Image Analysis's innererror code (or top
    code when there is no innererror)."""
    assert headers.get("content-type", "").startswith("application/json"), (status, headers, body[:200])
    doc = json.loads(body)
    assert isinstance(doc, dict) and set(doc) == {"error"}, doc
    error = doc["error"]
    assert isinstance(error.get("message"), str) and error["message"], doc
    kind = family(path)
    if kind == "cloud-vision":
        assert set(error) == {"code", "message", "status"}, doc
        assert error["code"] == status and error["status"] == GOOGLE_STATUS[status], (status, doc)
        assert code is None or error["status"] == code, (code, doc)
    elif kind == "callable":
        assert set(error) == {"status", "message"}, doc
        assert error["status"] in CALLABLE_STATUSES, doc
        assert code is None or error["status"] == code, (code, doc)
    elif kind == "azure-read":
        assert set(error) == {"code", "message"} and isinstance(error["code"], str), doc
        assert code is None or error["code"] == code, (code, doc)
    else:
        assert set(error) <= {"code", "message", "innererror"} and isinstance(error["code"], str), doc
        assert headers.get("x-ms-error-code") == error["code"], headers
        if "innererror" in error:
            assert set(error["innererror"]) == {"code", "message"}, doc
        specific = error.get("innererror", error)["code"]
        assert code is None or specific == code, (code, doc)
    return error["message"]


def libmicrohttpd_own(status, headers, body):
    """libmicrohttpd 0.9.75 answers a length it cannot represent (a chunk size or Content-Length of 2^64
    and more) with its own 413 page, without Content-Type, before the gateway sees the request: the
    only 413s that are not the gateway's. (For Content-Length 2^64 it even writes its status line twice.)"""
    return status == 413 and "content-type" not in headers and (body.startswith(b"<html>") or body.startswith(b"HTTP/1.1 413"))


def check_gateway(status, headers, body, path):
    """The HTTP corpus: JSON answers are the API's error; 404, 405 and 413 are always the gateway's own."""
    assert status != 200, (path, body[:200])
    if headers.get("content-type", "").startswith("application/json") or (status in (404, 405, 413) and not libmicrohttpd_own(status, headers, body)):
        typed(status, headers, body, path or CV)


GATEWAY = hh.Target(CV.encode(), get=405, post=400, max_body=MAX_BODY, timeout_s=REQUEST_TIMEOUT_S, check=check_gateway)


def serves(gw, png):
    """A real image read through the sync and async APIs: nothing before broke the gateway."""
    content = base64.b64encode(png).decode()
    status, _, body = http(gw, "POST", CV, json.dumps({"requests": [{"image": {"content": content}, "features": [{"type": "TEXT_DETECTION"}]}]}).encode(),
                           {"Content-Type": "application/json"})
    assert status == 200, body
    assert json.loads(body)["responses"][0]["textAnnotations"][0]["description"].split() == WORDS
    status, _, body = http(gw, "POST", IA, png, {"Content-Type": "application/octet-stream"})
    assert status == 200, body
    assert [ln["text"] for b in json.loads(body)["readResult"]["blocks"] for ln in b["lines"]] == LINES
    assert gw.gateway.alive()


def http(gw, method, path, body=b"", headers=None):
    data = hh.request(("%s %s HTTP/1.1" % (method, path)).encode(),
                      [b"Host: x", b"Connection: close", b"Content-Length: %d" % len(body)]
                      + [("%s: %s" % kv).encode() for kv in (headers or {}).items()], body)
    [(status, head, reply)] = hh.parse_responses(hh.exchange(gw.port, [data], timeout=60))
    return status, head, reply


# ---------------------------------------------------------------------------
# The API corpus
# ---------------------------------------------------------------------------

def api(name, method, path, body=b"", content_type=None, status=400, code=None, headers=(), words=None, pieces=None):
    """One exchange; the answer must be `status` with the API's error body (and `code`, and `words` in its message)."""
    fields = [b"Host: x", b"Connection: close"] + list(headers)
    if content_type is not None:
        fields.append(b"Content-Type: " + content_type.encode())
    if pieces is None:
        if isinstance(body, (dict, list, str, int, float, bool)) or body is None:
            body = json.dumps(body).encode()
        fields.append(b"Content-Length: %d" % len(body))
        data, pieces = hh.request(("%s %s HTTP/1.1" % (method, path)).encode(), fields, body), None
    else:
        data = None
        pieces = [hh.request(("%s %s HTTP/1.1" % (method, path)).encode(), fields)] + pieces

    def check(got, head, reply, _path):
        message = typed(got, head, reply, path, code)
        assert words is None or words in message, (words, message)

    return hh.Case("%s %s: %s" % (method, path.split("?")[0], name), data, {status}, pieces=pieces, path=path, check=check)


GOOD_ITEM = {"image": {"content": "aGVsbG8="}, "features": [{"type": "TEXT_DETECTION"}]}


def item_variants():
    """(name, AnnotateImageRequest) pairs that are wrong in one field each; none reaches a worker."""
    out = []
    for value in ["x", 1, [], True]:
        out.append(("image=%r" % (value,), {"image": value, "features": GOOD_ITEM["features"]}))
    for value in [1, True, [], {}, None, ""]:
        out.append(("image.content=%r" % (value,), {"image": {"content": value}, "features": GOOD_ITEM["features"]}))
    for value in ["x", 1, []]:
        out.append(("image.source=%r" % (value,), {"image": {"source": value}, "features": GOOD_ITEM["features"]}))
    for field in ["imageUri", "gcsImageUri"]:
        for value in [1, [], {}, True]:
            out.append(("image.source.%s=%r" % (field, value), {"image": {"source": {field: value}}, "features": GOOD_ITEM["features"]}))
    for value in ["TEXT_DETECTION", 1, True, None, {}, [], [None], ["TEXT_DETECTION"], [1], [[]]]:
        out.append(("features=%r" % (value,), {"image": GOOD_ITEM["image"], "features": value}))
    for value in [True, [], {}, 5.5, "LABEL_DETECTION", 99, "", None, "text_detection", -1]:
        out.append(("features[0].type=%r" % (value,), {"image": GOOD_ITEM["image"], "features": [{"type": value}]}))
    for value in ["x", 1, [], True]:
        out.append(("imageContext=%r" % (value,), dict(GOOD_ITEM, imageContext=value)))
    for value in ["en", 1, [1], {}, [None], [["en"]], True]:
        out.append(("imageContext.languageHints=%r" % (value,), dict(GOOD_ITEM, imageContext={"languageHints": value})))
    return out


BAD_BASE64 = ["%%%%", "a", "abcde", "ab=c", "=", "a===", "üüüü", "aGVsbG8=aGVsbG8=", "@@@@", "\u0000\u0000\u0000\u0000", "aGVs*bG8="]
URLS = [("imageUri", "http://example.com/a.png"), ("imageUri", "https://example.com/a.png"), ("imageUri", "gs://bucket/a.png"),
        ("imageUri", "file:///etc/passwd"), ("imageUri", "data:image/png;base64,aGVsbG8="), ("imageUri", "ftp://example.com/a"),
        ("imageUri", "http://169.254.169.254/latest/meta-data/"), ("gcsImageUri", "gs://bucket/a.png")]
MALFORMED = [b"", b"{", b"[", b"}", b"{\"requests\":", b"{'requests': []}", b"nul", b"{\"requests\": [{]}", b"\xff\xfe{}",
             b"{\"requests\": [] } }", b"{\"requests\": NaN}", b"{\"requests\": [1e999999]}", b"\"requests\"", b"{\"a\":\"\\ud800\"",
             b"\x00" * 16]


def deep(n, kind="array"):
    return (b"[" * n + b"]" * n) if kind == "array" else (b'{"a":' * n + b"1" + b"}" * n)


def cloud_vision_cases():
    cases = []
    for i, raw in enumerate(MALFORMED):
        cases.append(api("malformed JSON %d" % i, "POST", CV, raw, "application/json"))
    for value in [[], "x", 1, None, True, {"requests": "x"}, {"requests": 1}, {"requests": {}}, {"requests": True},
                  {"requests": ["x"]}, {"requests": [1]}, {"requests": [[]]}, {"requests": [None]}]:
        cases.append(api("body %r" % (value,), "POST", CV, value, "application/json"))
    for value in [{}, {"requests": None}, {"requests": []}]:
        cases.append(api("no requests %r" % (value,), "POST", CV, value, "application/json", words="No requests"))
    for name, item in item_variants():
        cases.append(api(name, "POST", CV, {"requests": [item]}, "application/json"))
    cases.append(api("second request bad", "POST", CV, {"requests": [GOOD_ITEM, {"image": 1}]}, "application/json"))
    for text in BAD_BASE64:
        cases.append(api("base64 %r" % text, "POST", CV, {"requests": [dict(GOOD_ITEM, image={"content": text})]}, "application/json",
                         words="Base64 decoding failed"))
    # Without --fetch-allow every URL is refused for the whole call (with content as well, content wins, as Google says).
    for field, url in URLS:
        cases.append(api("URL %s" % url, "POST", CV, {"requests": [{"image": {"source": {field: url}},
                                                                    "features": GOOD_ITEM["features"]}]}, "application/json",
                         words="does not fetch"))
    for n in (1000, 100000):
        for kind in ("array", "object"):
            cases.append(api("nesting %d %s" % (n, kind), "POST", CV, deep(n, kind), "application/json"))
            cases.append(api("nesting %d %s in a field" % (n, kind), "POST", CV,
                             b'{"requests":[{"features":[{"type":"TEXT_DETECTION"}],"image":{"x":' + deep(n, kind) + b"}}]}", "application/json"))
    return cases


def callable_cases():
    cases = []
    for path in (FB, FB_PROJECT):
        for ctype in [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx",
                      "application/xml"]:
            cases.append(api("Content-Type %r" % ctype, "POST", path, {"data": GOOD_ITEM}, ctype, code="INVALID_ARGUMENT",
                             words="Content-Type"))
        for i, raw in enumerate(MALFORMED[:8]):
            cases.append(api("malformed JSON %d" % i, "POST", path, raw, "application/json", code="INVALID_ARGUMENT"))
        for value in [{}, {"data": None}, [], "x", 1, {"data": "x"}, {"data": 1}, {"data": []}, {"data": True}]:
            cases.append(api("envelope %r" % (value,), "POST", path, value, "application/json", code="INVALID_ARGUMENT"))
        for n in (1000, 100000):
            cases.append(api("nesting %d" % n, "POST", path, b'{"data":' + deep(n) + b"}", "application/json", code="INVALID_ARGUMENT"))
        for method in ("GET", "PUT", "DELETE"):
            cases.append(api("method %s" % method, method, path, b"", None, code="INVALID_ARGUMENT"))
    for name, item in item_variants():
        cases.append(api(name, "POST", FB, {"data": item}, "application/json", code="INVALID_ARGUMENT"))
    for text in BAD_BASE64[:6]:
        cases.append(api("base64 %r" % text, "POST", FB, {"data": dict(GOOD_ITEM, image={"content": text})}, "application/json",
                         code="INVALID_ARGUMENT", words="Base64"))
    for field, url in URLS[:4]:
        cases.append(api("URL %s" % url, "POST", FB, {"data": {"image": {"source": {field: url}}, "features": {"type": "TEXT_DETECTION"}}},
                         "application/json", code="INVALID_ARGUMENT", words="does not fetch"))
    return cases


AZURE_MEDIA = [None, "text/plain", "application/xml", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded",
               "text/json", "application/json-patch+json", "application/octet-streamx"]


def azure_read_cases():
    cases = []
    for path in (AR32, AR20):
        for value in [5, ["a"], {}, True]:
            cases.append(api("JSON url=%r" % (value,), "POST", path, {"url": value}, "application/json", code="InvalidRequest"))
        for value in [[], "x", 1]:
            cases.append(api("JSON %r" % (value,), "POST", path, value, "application/json", code="InvalidRequest"))
        for raw in MALFORMED[:6]:
            cases.append(api("malformed JSON %r" % raw[:10], "POST", path, raw, "application/json", code="InvalidRequest"))
        for value in [{}, {"url": None}]:
            cases.append(api("JSON without url %r" % (value,), "POST", path, value, "application/json", code="InvalidImageUrl"))
        for _, url in URLS[:5] + [("", "")]:
            cases.append(api("JSON url %r" % url, "POST", path, {"url": url}, "application/json", code="InvalidImageUrl", words="does not fetch"))
        for ctype in AZURE_MEDIA:
            cases.append(api("Content-Type %r" % ctype, "POST", path, b"\x89PNG", ctype, status=415, code="UnsupportedMediaType"))
        cases.append(api("empty image", "POST", path, b"", "application/octet-stream", code="InvalidImage"))
        cases.append(api("empty image/png", "POST", path, b"", "image/png", code="InvalidImage"))
        cases.append(api("nesting", "POST", path, deep(100000), "application/json", code="InvalidRequest"))
        for method in ("GET", "PUT", "DELETE", "PATCH"):
            cases.append(api("method %s" % method, method, path, b"", None, status=405, code="MethodNotAllowed"))
    for base in ("/vision/v3.2/read/analyzeResults/", "/vision/v2.0/read/operations/"):
        for op in ["zz", "0" * 31, "0" * 33, "g" * 32, "0123456789ABCDEF0123456789ABCDEF", "ffffffffffffffffffffffffffffffff", "%00", "..%2f..",
                   "%27%20OR%201%3D1%20--", "%zz"]:
            cases.append(api("poll %r" % op, "GET", base + op, b"", None, status=404, code="NotFound"))
        cases.append(api("poll with POST", "POST", base + "0" * 32, b"", None, status=405, code="MethodNotAllowed"))
        cases.append(api("poll with DELETE", "DELETE", base + "0" * 32, b"", None, status=405, code="MethodNotAllowed"))
    for path in ["/vision/v3.1/read/analyze", "/vision/v3.2/ocr", "/vision/", "/vision/v3.2/read/analyze/extra",
                 "/vision/v3.2/read/analyzeResults/", "/vision/v3.2/read/analyzeResults/a/b"]:
        cases.append(api("unknown route", "POST", path, b"", None, status=404, code="NotFound"))
    return cases


def image_analysis_cases():
    base = "/computervision/imageanalysis:analyze"
    cases = []
    for query, inner in [("", "BadArgument"), ("?features=read", "BadArgument"), ("?api-version=&features=read", "BadArgument"),
                         ("?api-version=2023-10-01-preview&features=read", "BadArgument"), ("?api-version=latest&features=read", "BadArgument"),
                         ("?api-version=2023-02-01-preview&features=read", "BadArgument"), ("?api-version=2023-10-01", "BadArgument"),
                         ("?api-version=2023-10-01&features=", "BadArgument"), ("?api-version=2023-10-01&features=,", "BadArgument"),
                         ("?api-version=2023-10-01&features=tags", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=caption", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=denseCaptions", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=objects", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=smartCrops", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=people", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=read,tags", "NotSupportedVisualFeature"),
                         ("?api-version=2024-02-01&features=READ,People", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=nonsense", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=read;tags", "NotSupportedVisualFeature"),
                         ("?api-version=2023-10-01&features=read&features=objects", "NotSupportedVisualFeature")]:
        cases.append(api("query %r" % query, "POST", base + query, b"\x89PNG", "application/octet-stream", code=inner))
    for value, inner in [({"url": 5}, "BadArgument"), ({"url": ["a"]}, "BadArgument"), ([], "BadArgument"), ("x", "BadArgument"),
                         ({"url": None}, "InvalidImageUrl"), ({}, "InvalidImageUrl"), ({"url": "http://example.com/a.png"}, "InvalidImageUrl"),
                         ({"url": "file:///etc/passwd"}, "InvalidImageUrl"), ({"url": ""}, "InvalidImageUrl")]:
        cases.append(api("JSON %r" % (value,), "POST", IA, value, "application/json", code=inner))
    for raw in MALFORMED[:6]:
        cases.append(api("malformed JSON %r" % raw[:10], "POST", IA, raw, "application/json", code="BadArgument"))
    cases.append(api("nesting", "POST", IA, deep(100000, "object"), "application/json", code="BadArgument"))
    for ctype in AZURE_MEDIA:
        cases.append(api("Content-Type %r" % ctype, "POST", IA, b"\x89PNG", ctype, status=415, code="UnsupportedMediaType"))
    cases.append(api("empty image", "POST", IA, b"", "application/octet-stream", code="InvalidImageSize"))
    for method in ("GET", "PUT", "DELETE"):
        cases.append(api("method %s" % method, method, IA, b"", None, status=405, code="405"))
    for path in ["/computervision/imageanalysis:segment", "/computervision/", "/computervision/imageanalysis:analyze/x",
                 "/computervision/retrieval:vectorizeImage"]:
        cases.append(api("unknown route", "POST", path + "?api-version=2023-10-01", b"", None, status=404, code="404"))
    return cases


def limit_cases():
    """Every route: a body over the limit (declared, and chunked), a head over the limit, chunked abuse, a truncated body."""
    routes = [(CV, "application/json", "INVALID_ARGUMENT", b'{"requests":[{"image":{"content":"%%%%"},"features":[{"type":"TEXT_DETECTION"}]}]}', 400),
              (FB, "application/json", "RESOURCE_EXHAUSTED", b'{"data":{"image":{"content":"%%%%"},"features":{"type":"TEXT_DETECTION"}}}', 400),
              (AR32, "application/octet-stream", "InvalidImageSize", b'{"url":"http://example.com/a.png"}', 400),
              (AR20, "application/octet-stream", "InvalidImageSize", b'{"url":"http://example.com/a.png"}', 400),
              (IA, "application/octet-stream", "InvalidImageSize", b'{"url":"http://example.com/a.png"}', 400)]
    cases = []
    block = b"x" * 65536
    for path, ctype, code413, small, small_status in routes:
        # Declared over the limit: refused before the body is read.
        cases.append(api("Content-Length over the limit", "POST", path, b"", ctype, status=413, code=code413,
                         pieces=[], headers=[b"Content-Length: %d" % (MAX_BODY + 1)]))
        cases.append(api("Content-Length 1e12", "POST", path, b"", ctype, status=413, code=code413,
                         pieces=[], headers=[b"Content-Length: 1000000000000"]))
        # Chunked past the limit: read (and dropped) until the limit, then 413.
        cases.append(api("chunked over the limit", "POST", path, b"", ctype, status=413, code=code413,
                         headers=[b"Transfer-Encoding: chunked"],
                         pieces=[b"10000\r\n" + block + b"\r\n"] * (MAX_BODY // len(block) + 2) + [b"0\r\n\r\n"]))
        # A head over 16 KiB (within libmicrohttpd's 64 KiB buffer): the gateway's 431, in the API's shape.
        for size in (17000, 40000):
            cases.append(api("a %d-byte header" % size, "POST", path, b"", ctype, status=431,
                             headers=[b"X-Pad: " + b"p" * size, b"Content-Length: 0"], pieces=[]))
        # Chunked abuse that is still valid HTTP: the body must arrive whole and get the route's own error.
        json_ctype = "application/json"
        one_byte = [b"1\r\n" + small[i:i + 1] + b"\r\n" for i in range(len(small))] + [b"0\r\n\r\n"]
        cases.append(api("chunked, one byte a chunk", "POST", path, b"", json_ctype, status=small_status,
                         headers=[b"Transfer-Encoding: chunked"], pieces=[b"".join(one_byte)]))
        cases.append(api("chunked with extensions and a trailer", "POST", path, b"", json_ctype, status=small_status,
                         headers=[b"Transfer-Encoding: chunked"],
                         pieces=[b"%x;name=value;x\r\n" % len(small) + small + b"\r\n0;end\r\nX-Trailer: t\r\n\r\n"]))
        cases.append(api("chunked, leading zeros and upper case", "POST", path, b"", json_ctype, status=small_status,
                         headers=[b"Transfer-Encoding: chunked"], pieces=[b"%08X\r\n" % len(small) + small + b"\r\n0000\r\n\r\n"]))
        cases.append(api("chunked in pieces", "POST", path, b"", json_ctype, status=small_status, headers=[b"Transfer-Encoding: chunked"],
                         pieces=[b"%x\r\n" % len(small), small[:7], small[7:] + b"\r\n", b"0\r\n", b"\r\n"]))
    return cases


def raw_cases():
    """Malformed framing on the routes (libmicrohttpd's answer or ours): statuses, and typed bodies where JSON."""
    cases = []
    for path in (CV, FB, AR32, IA):
        line = ("POST %s HTTP/1.1" % path).encode()
        for name, headers, body, expect, half in [
            ("truncated body, half-closed", [b"Content-Length: 100"], b"0123456789", {400, 408}, True),
            ("truncated body, waiting", [b"Content-Length: 100"], b"0123456789", {408}, False),
            ("chunked, bad size", [b"Transfer-Encoding: chunked"], b"zz\r\nabc\r\n", {400}, False),
            ("chunked, negative size", [b"Transfer-Encoding: chunked"], b"-3\r\nabc\r\n", {400}, False),
            ("chunked, size past the data, half-closed", [b"Transfer-Encoding: chunked"], b"ffff\r\nabc", {400, 408}, True),
            ("chunked, size 2^72", [b"Transfer-Encoding: chunked"], b"ffffffffffffffffff\r\n", {400, 413}, False),
            ("chunked and Content-Length", [b"Transfer-Encoding: chunked", b"Content-Length: 3"], b"0\r\n\r\n", {400}, False),
            ("two Content-Lengths", [b"Content-Length: 3", b"Content-Length: 4"], b"abcd", {400}, False),
            ("Content-Length abc", [b"Content-Length: abc"], b"", {400}, False),
        ]:
            def check(status, head, body, p, path=path):
                if head.get("content-type", "").startswith("application/json") or (status == 413 and not libmicrohttpd_own(status, head, body)):
                    typed(status, head, body, path)
            cases.append(hh.Case("%s: %s" % (path.split("?")[0], name), hh.request(line, [b"Host: x", b"Content-Type: application/json"] + headers, body),
                                 expect, half_close=half, silent_ok=half, path=path, check=check))
    return cases


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

@pytest.mark.timeout_s(240)
def test_api_corpus_gets_each_apis_typed_errors(gw, png):
    groups = [("Cloud Vision", cloud_vision_cases()), ("Firebase callable", callable_cases()), ("Azure Read", azure_read_cases()),
              ("Image Analysis", image_analysis_cases()), ("limits", limit_cases()), ("framing", raw_cases())]
    total = 0
    for _, cases in groups:
        hh.run_cases(gw.port, cases, workers=12, timeout=60)
        total += len(cases)
        assert gw.gateway.alive(), gw.gateway.log_tail()
    assert total >= 300, total
    serves(gw, png)


@pytest.mark.timeout_s(240)
def test_http_corpus_reused_from_the_exporters(gw, png):
    groups = [hh.malformed_lines(GATEWAY), hh.methods(GATEWAY), hh.targets(GATEWAY), hh.versions(GATEWAY), hh.headers(GATEWAY),
              hh.bodies(GATEWAY), hh.pipelining(GATEWAY), hh.garbage(GATEWAY)]
    total = 0
    for cases in groups:
        hh.run_cases(gw.port, cases, workers=12, timeout=60)
        total += len(cases)
        assert gw.gateway.alive(), gw.gateway.log_tail()
    assert total >= 250, total
    serves(gw, png)


@pytest.mark.timeout_s(90)
def test_slowloris_on_every_api_is_cut_off_while_images_are_read(gw, png):
    """One byte a second on each API's route, and heads that stop: each connection is cut off with 408 at
    the request timeout, and real images are read meanwhile."""
    results = {}

    def loris(i, path):
        head = ("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Slow: %s\r\n\r\n" % (path, "s" * 40)).encode()
        started = time.monotonic()
        data = hh.exchange(gw.port, [bytes([b]) for b in head], pause=1.0, timeout=REQUEST_TIMEOUT_S + 30)
        results[i] = (time.monotonic() - started, data, path)

    def stalled(i, path):
        started = time.monotonic()
        data = hh.exchange(gw.port, [("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{" % path).encode()],
                           timeout=REQUEST_TIMEOUT_S + 30)
        results[i] = (time.monotonic() - started, data, path)

    paths = [CV, FB, AR32, AR20, IA]
    threads = [threading.Thread(target=loris, args=(i, p)) for i, p in enumerate(paths)]
    threads += [threading.Thread(target=stalled, args=(len(paths) + i, p)) for i, p in enumerate(paths)]
    for t in threads:
        t.start()
    served = 0
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while time.monotonic() < deadline:
        serves(gw, png)
        served += 1
    for t in threads:
        t.join(REQUEST_TIMEOUT_S + 40)
    assert served >= 2
    assert len(results) == 2 * len(paths)
    for i, (elapsed, data, path) in sorted(results.items()):
        assert REQUEST_TIMEOUT_S - 1 <= elapsed <= REQUEST_TIMEOUT_S + 5, (i, path, elapsed)
        [(status, _, body)] = hh.parse_responses(data)
        assert status == 408, (i, path, status, body)
    serves(gw, png)
