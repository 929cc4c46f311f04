"""`quire gateway`: the HTTP calls apps make to Google Cloud Vision, the Firebase callable
`annotateImage`, Azure Read and Azure Image Analysis 4.0, answered through the broker.

Real processes: `quire broker` + `quire worker ocr` + `quire gateway` (once for the module). The
Cloud Vision calls go through google-cloud-vision's own REST transport pointed at the gateway
(anonymous credentials); the Firebase tutorial's call is replayed as raw HTTP. Bad input must get
the imitated API's typed error, and the gateway must keep serving afterwards.
Needs: PyPI google-cloud-vision, azure-cognitiveservices-vision-computervision, azure-ai-vision-imageanalysis, pillow.
"""

import base64
import http.client as httpclient
import io
import json
import os
import time

import pytest

import http_calls
import ocr_images as oi
from conftest import Proc, start_gateway
from test_ocr import quire_bin, start_stack, zctx  # noqa: F401 (fixtures)

LINES = ["Quire reads receipts", "and invoices too"]
IMAGE_ANALYSIS = "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read"
WORDS = " ".join(LINES).split()


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    yield from gateway_stack(quire_bin, zctx, tmp_path_factory.mktemp("gateway-stack"), worker_threads=1)


def gateway_stack(quire_bin, zctx, log_dir, worker_threads):
    """For a fixture: a broker with durable jobs, an OCR worker of `worker_threads` and `quire gateway`
    in front of them; yields the stack with its `gateway` Proc and `port`, and stops all three after."""
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(log_dir / "data")],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", str(worker_threads)],
    ])
    try:
        gateway, port = start_gateway(quire_bin, st.url, log_dir)
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


def http(stack, method, path, body=None, headers=None, timeout=60):
    """One request to the stack's gateway on a fresh connection: (status, headers, parsed JSON or raw bytes)."""
    return http_calls.request(stack.port, method, path, body, headers, timeout)


def vision_client(stack):
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import vision
    return vision.ImageAnnotatorClient(credentials=AnonymousCredentials(), transport="rest",
                                       client_options={"api_endpoint": "http://127.0.0.1:%d" % stack.port})


def google_error(body, code, status):
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["status"] == status, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    return body["error"]["message"]


def serves(stack, png):
    """The gateway still answers a good call after whatever came before."""
    status, _, body = http(stack, "POST", "/v1/images:annotate", {"requests": [
        {"image": {"content": base64.b64encode(png).decode()}, "features": [{"type": "TEXT_DETECTION"}]}]})
    assert status == 200, body
    assert body["responses"][0]["textAnnotations"][0]["description"].split() == WORDS
    assert stack.gateway.alive()


# ---------------------------------------------------------------------------
# Cloud Vision v1 through Google's own client
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("feature", ["TEXT_DETECTION", "DOCUMENT_TEXT_DETECTION"])
def test_google_client_reads_text_through_the_gateway(stack, png, feature):
    from google.cloud import vision
    client = vision_client(stack)
    request = vision.AnnotateImageRequest(image=vision.Image(content=png),
                                          features=[vision.Feature(type_=vision.Feature.Type[feature])])
    reply = client.batch_annotate_images(requests=[request])
    (r,) = reply.responses
    assert not r.error.message
    assert r.text_annotations[0].description.split() == WORDS
    assert [a.description for a in r.text_annotations[1:]] == WORDS
    assert r.full_text_annotation.text == r.text_annotations[0].description
    words = ["".join(s.text for s in w.symbols) for b in r.full_text_annotation.pages[0].blocks
             for p in b.paragraphs for w in p.words]
    assert words == WORDS
    confidences = [w.confidence for b in r.full_text_annotation.pages[0].blocks for p in b.paragraphs for w in p.words]
    # DOCUMENT_TEXT_DETECTION has confidences; TEXT_DETECTION leaves them out, as Google does.
    assert all(c > 0.5 for c in confidences) if feature == "DOCUMENT_TEXT_DETECTION" else all(c == 0 for c in confidences)


def test_google_client_helper_and_language_hints(stack, png):
    from google.cloud import vision
    client = vision_client(stack)
    r = client.text_detection(image=vision.Image(content=png), image_context=vision.ImageContext(language_hints=["en"]))
    assert r.text_annotations[0].description.split() == WORDS
    r = client.document_text_detection(image=vision.Image(content=png), image_context=vision.ImageContext(language_hints=[]))
    assert r.full_text_annotation.text.split() == WORDS


def test_google_client_gets_bad_request_for_an_image_url(stack, png):
    from google.api_core import exceptions
    from google.cloud import vision
    client = vision_client(stack)
    with pytest.raises(exceptions.BadRequest) as raised:
        client.text_detection(image=vision.Image(source=vision.ImageSource(image_uri="https://example.com/a.png")))
    assert "does not fetch" in str(raised.value)
    serves(stack, png)


# ---------------------------------------------------------------------------
# Cloud Vision v1 as raw HTTP
# ---------------------------------------------------------------------------

def test_batch_answers_each_image_in_order_with_per_image_errors(stack, png):
    content = base64.b64encode(png).decode()
    status, headers, body = http(stack, "POST", "/v1/images:annotate", {"requests": [
        {"image": {"content": content}, "features": [{"type": "DOCUMENT_TEXT_DETECTION"}], "imageContext": {"languageHints": []}},
        {"image": {"content": base64.b64encode(b"not an image at all").decode()}, "features": [{"type": "TEXT_DETECTION"}]},
        {"image": {"content": base64.urlsafe_b64encode(png).decode().rstrip("=")}, "features": [{"type": "TEXT_DETECTION", "maxResults": 5}]},
    ]})
    assert status == 200, body
    assert headers["content-type"].startswith("application/json")
    first, bad, third = body["responses"]
    assert first["fullTextAnnotation"]["text"].split() == WORDS
    assert set(bad) == {"error"} and bad["error"]["code"] == 3 and bad["error"]["message"]
    assert third["textAnnotations"][0]["description"].split() == WORDS


@pytest.mark.parametrize("body, words", [
    (b"{not json", "Invalid JSON"),
    (b'{"requests": [{"image": {"content": "%%%%"}, "features": [{"type": "TEXT_DETECTION"}]}]}', "Base64 decoding failed"),
    (b'{"requests": [{"image": {"content": "aGVsbG8="}, "features": []}]}', "No feature"),
    (b'{"requests": [{"image": {"content": "aGVsbG8="}, "features": [{"type": "LABEL_DETECTION"}]}]}', "text only"),
    (b'{"requests": [{"image": {"source": {"imageUri": "http://example.com/x.png"}}, "features": [{"type": "TEXT_DETECTION"}]}]}',
     "does not fetch"),
    (b'{"requests": []}', "No requests"),
    (b'{"requests": "nope"}', "Invalid JSON"),
])
def test_bad_input_gets_googles_400_and_the_gateway_keeps_serving(stack, png, body, words):
    status, _, reply = http(stack, "POST", "/v1/images:annotate", body, {"Content-Type": "application/json"})
    assert status == 400, reply
    assert words in google_error(reply, 400, "INVALID_ARGUMENT")
    serves(stack, png)


def test_unknown_routes_and_methods_get_googles_404_and_405(stack, png):
    status, _, body = http(stack, "GET", "/v1/nothing-here")
    assert status == 404
    google_error(body, 404, "NOT_FOUND")
    status, headers, body = http(stack, "GET", "/v1/images:annotate")
    assert status == 405
    assert headers["allow"] == "POST"
    google_error(body, 405, "NOT_FOUND")
    serves(stack, png)


def test_a_body_over_the_limit_gets_413(stack, png):
    big = b'{"requests":[{"image":{"content":"' + b"A" * (17 << 20) + b'"}}]}'
    conn = http_client_connection(stack)
    try:
        conn.putrequest("POST", "/v1/images:annotate")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(big)))
        conn.endheaders()
        try:
            conn.send(big)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered before reading the body, and closed
        r = conn.getresponse()
        assert r.status == 413
        google_error(json.loads(r.read()), 413, "INVALID_ARGUMENT")
    finally:
        conn.close()
    serves(stack, png)


def http_client_connection(stack):
    return httpclient.HTTPConnection("127.0.0.1", stack.port, timeout=60)


# ---------------------------------------------------------------------------
# Firebase callable annotateImage (the tutorial's call, replayed)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/annotateImage", "/my-project/us-central1/annotateImage"])
def test_firebase_tutorial_call_gets_the_callable_envelope(stack, png, path):
    # The tutorial sends `features` as one object, not a list.
    request = {"image": {"content": base64.b64encode(png).decode()}, "features": {"type": "TEXT_DETECTION"},
               "imageContext": {"languageHints": ["en"]}}
    status, headers, body = http(stack, "POST", path, {"data": request})
    assert status == 200, body
    assert headers["content-type"].startswith("application/json")
    assert set(body) == {"result"}
    full = body["result"]["fullTextAnnotation"]
    assert full["text"].split() == WORDS
    for page in full["pages"]:
        for block in page["blocks"]:
            for paragraph in block["paragraphs"]:
                for word in paragraph["words"]:
                    assert word["boundingBox"]["vertices"]
                    for symbol in word["symbols"]:
                        assert isinstance(symbol["text"], str) and symbol["boundingBox"]["vertices"]
    words = ["".join(s["text"] for s in w["symbols"]) for b in full["pages"][0]["blocks"] for p in b["paragraphs"] for w in p["words"]]
    assert words == WORDS


def callable_error(body, status):
    assert set(body) == {"error"}, body
    assert body["error"]["status"] == status, body
    assert body["error"]["message"], body
    return body["error"]["message"]


@pytest.mark.parametrize("body, headers, code, status, words", [
    (b"{nope", {"Content-Type": "application/json"}, 400, "INVALID_ARGUMENT", "Bad Request"),
    (b'{"image": {}}', {"Content-Type": "application/json"}, 400, "INVALID_ARGUMENT", "data"),
    (b'{"data": {"image": {"content": "!!"}, "features": {"type": "TEXT_DETECTION"}}}', {"Content-Type": "application/json"},
     400, "INVALID_ARGUMENT", "Base64"),
    (b'{"data": {"image": {"source": {"imageUri": "gs://b/x.png"}}, "features": {"type": "TEXT_DETECTION"}}}',
     {"Content-Type": "application/json"}, 400, "INVALID_ARGUMENT", "does not fetch"),
    (b'{"data": {"image": {"content": "aGVsbG8="}, "features": {"type": "TEXT_DETECTION"}}}', {"Content-Type": "application/json"},
     400, "INVALID_ARGUMENT", ""),
    (b'{"data": {}}', {"Content-Type": "text/plain"}, 400, "INVALID_ARGUMENT", "Content-Type"),
])
def test_firebase_bad_input_gets_the_callable_error(stack, png, body, headers, code, status, words):
    got, _, reply = http(stack, "POST", "/annotateImage", body, headers)
    assert got == code, reply
    assert words in callable_error(reply, status)
    serves(stack, png)


# ---------------------------------------------------------------------------
# Azure Read 3.2 through the Computer Vision SDK, over durable jobs
# ---------------------------------------------------------------------------

def azure_client(stack):
    from azure.cognitiveservices.vision.computervision import ComputerVisionClient
    from msrest.authentication import CognitiveServicesCredentials
    return ComputerVisionClient("http://127.0.0.1:%d" % stack.port, CognitiveServicesCredentials("not-checked"))


def test_azure_sdk_reads_through_read_and_get_read_result(stack, png):
    from azure.cognitiveservices.vision.computervision.models import OperationStatusCodes
    client = azure_client(stack)
    raw = client.read_in_stream(io.BytesIO(png), language="en", raw=True)
    location = raw.headers["Operation-Location"]
    assert location.startswith("http://127.0.0.1:%d/vision/v3.2/read/analyzeResults/" % stack.port), location
    operation_id = location.split("/")[-1]
    statuses = []
    deadline = time.monotonic() + 60
    while True:
        result = client.get_read_result(operation_id)
        statuses.append(result.status)
        if result.status not in (OperationStatusCodes.not_started, OperationStatusCodes.running):
            break
        assert time.monotonic() < deadline, statuses
        time.sleep(0.2)
    assert result.status == OperationStatusCodes.succeeded, statuses
    assert result.created_date_time and result.last_updated_date_time
    (page,) = result.analyze_result.read_results
    assert [line.text for line in page.lines] == LINES
    assert [w.text for line in page.lines for w in line.words] == WORDS
    assert all(len(line.bounding_box) == 8 for line in page.lines)
    # Another poll (another app with the operation URL) gets the same result: it is a durable job.
    again = client.get_read_result(operation_id)
    assert [line.text for line in again.analyze_result.read_results[0].lines] == LINES


def test_azure_sdk_read_with_a_url_gets_azures_error(stack, png):
    from azure.cognitiveservices.vision.computervision.models import ComputerVisionOcrErrorException
    client = azure_client(stack)
    # The SDK raises its typed exception; the body is Azure 3.2's {"error":{"code","message"}} (the
    # SDK's older ComputerVisionOcrError model reads top-level fields, so the body is checked as sent).
    with pytest.raises(ComputerVisionOcrErrorException) as raised:
        client.read("https://example.com/receipt.jpg", raw=True)
    assert raised.value.response.status_code == 400
    body = raised.value.response.json()
    azure_error(body, "InvalidImageUrl")
    assert "does not fetch" in body["error"]["message"]
    with pytest.raises(ComputerVisionOcrErrorException) as raised:
        client.get_read_result("0123456789abcdef0123456789abcdef")
    assert raised.value.response.status_code == 404
    azure_error(raised.value.response.json(), "NotFound")
    serves(stack, png)


def azure_error(body, code):
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body


@pytest.mark.parametrize("path", ["/vision/v3.2/read/analyze", "/vision/v2.0/read/core/asyncBatchAnalyze"])
def test_azure_bad_input_gets_azures_error(stack, png, path):
    status, _, body = http(stack, "POST", path, {"url": "https://example.com/a.png"})
    assert status == 400
    azure_error(body, "InvalidImageUrl")
    status, _, body = http(stack, "POST", path, b"{nope", {"Content-Type": "application/json"})
    assert status == 400
    azure_error(body, "InvalidRequest")
    status, _, body = http(stack, "POST", path, b"", {"Content-Type": "application/octet-stream"})
    assert status == 400
    azure_error(body, "InvalidImage")
    status, _, body = http(stack, "POST", path, b"x=1", {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415
    azure_error(body, "UnsupportedMediaType")
    status, _, body = http(stack, "GET", path)
    assert status == 405
    azure_error(body, "MethodNotAllowed")
    status, _, body = http(stack, "GET", "/vision/v3.2/nothing")
    assert status == 404
    azure_error(body, "NotFound")
    serves(stack, png)


def poll_operation(stack, operation_location, pending=("notStarted", "running")):
    """GETs an Azure Read operation until its status is no longer pending: the last body."""
    path = "/" + operation_location.split("/", 3)[3]
    deadline = time.monotonic() + 60
    while True:
        status, _, body = http(stack, "GET", path)
        assert status == 200, body
        if body["status"] not in pending:
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


def test_azure_job_of_a_non_image_fails(stack):
    status, headers, _ = http(stack, "POST", "/vision/v3.2/read/analyze", b"not an image", {"Content-Type": "application/octet-stream"})
    assert status == 202
    body = poll_operation(stack, headers["operation-location"])
    assert body["status"] == "failed"
    assert "analyzeResult" not in body


# ---------------------------------------------------------------------------
# Azure Read 2.0: the iOS tutorial's calls, replayed
# ---------------------------------------------------------------------------

def test_read_20_tutorial_flow_decodes_into_its_types(stack, png):
    status, headers, body = http(stack, "POST", "/vision/v2.0/read/core/asyncBatchAnalyze?mode=Printed", png,
                                 {"Content-Type": "application/octet-stream", "Ocp-Apim-Subscription-Key": "not-checked"})
    assert status == 202, body
    location = headers["operation-location"]
    prefix = "http://127.0.0.1:%d/vision/v2.0/read/operations/" % stack.port
    assert location.startswith(prefix), location
    path = location[len("http://127.0.0.1:%d" % stack.port):]
    deadline = time.monotonic() + 60
    while True:
        status, _, body = http(stack, "GET", path)
        assert status == 200, body
        assert body["status"] in ("NotStarted", "Running", "Succeeded"), body
        if body["status"] == "Succeeded":
            break
        assert set(body) == {"status"}, body
        assert time.monotonic() < deadline, body
        time.sleep(0.2)
    # The tutorial's Codable structs: boundingBox [Int], a word's confidence String? ("Low" or absent).
    for result in body["recognitionResults"]:
        assert result["unit"] == "pixel"
        for line in result["lines"]:
            for item in [line] + line["words"]:
                assert len(item["boundingBox"]) == 8 and all(type(v) is int for v in item["boundingBox"])
            for word in line["words"]:
                assert set(word) <= {"boundingBox", "text", "confidence"}, word
                assert word.get("confidence", "Low") == "Low", word
    assert [line["text"] for line in body["recognitionResults"][0]["lines"]] == LINES
    status, _, body = http(stack, "GET", "/vision/v2.0/read/operations/ffffffffffffffffffffffffffffffff")
    assert status == 404
    azure_error(body, "NotFound")


# ---------------------------------------------------------------------------
# Azure Image Analysis 4.0 through azure-ai-vision-imageanalysis (synchronous)
# ---------------------------------------------------------------------------

def image_analysis_client(stack):
    from azure.ai.vision.imageanalysis import ImageAnalysisClient
    from azure.core.credentials import AzureKeyCredential
    # The key travels as Ocp-Apim-Subscription-Key; with the broker's auth off it is accepted and not checked.
    return ImageAnalysisClient(endpoint="http://127.0.0.1:%d" % stack.port, credential=AzureKeyCredential("x"))


def test_image_analysis_sdk_reads_through_the_gateway(stack, png):
    from azure.ai.vision.imageanalysis.models import ImageAnalysisResult, VisualFeatures
    from PIL import Image
    client = image_analysis_client(stack)
    result = client.analyze(image_data=png, visual_features=[VisualFeatures.READ])
    assert isinstance(result, ImageAnalysisResult)
    assert result.model_version == "2023-10-01"
    assert (result.metadata.width, result.metadata.height) == Image.open(io.BytesIO(png)).size
    assert len(result.read.blocks) == 1  # the published shape: one block (maxItems 1)
    lines = [line for block in result.read.blocks for line in block.lines]
    assert [line.text for line in lines] == LINES
    assert [word.text for line in lines for word in line.words] == WORDS
    width, height = result.metadata.width, result.metadata.height
    for item in lines + [word for line in lines for word in line.words]:
        # The published shape: 4 integer points inside the image.
        assert len(item.bounding_polygon) == 4
        assert all(type(p.x) is int and type(p.y) is int and 0 <= p.x <= width and 0 <= p.y <= height for p in item.bounding_polygon)
    assert all(0.5 < word.confidence <= 1 for line in lines for word in line.words)
    # What the SDK did not decode is as the swagger says too: nothing for features not asked for.
    raw = result.as_dict()
    assert set(raw) == {"modelVersion", "metadata", "readResult"}, raw.keys()


def test_image_analysis_both_api_versions_and_the_raw_shape(stack, png):
    for version in ("2023-10-01", "2024-02-01"):
        status, headers, body = http(stack, "POST", "/computervision/imageanalysis:analyze?api-version=%s&features=read&language=en" % version,
                                     png, {"Content-Type": "application/octet-stream", "Ocp-Apim-Subscription-Key": "not-checked"})
        assert status == 200, body
        assert headers["content-type"].startswith("application/json")
        assert len(body["readResult"]["blocks"]) == 1, body  # one block with every line, as the service answers
        lines = [line for b in body["readResult"]["blocks"] for line in b["lines"]]
        assert [line["text"] for line in lines] == LINES
        for line in lines:
            assert set(line) == {"text", "boundingPolygon", "words"}
            for word in line["words"]:
                assert set(word) == {"text", "boundingPolygon", "confidence"}
                assert [set(p) for p in word["boundingPolygon"]] == [{"x", "y"}] * 4


def image_analysis_error(body, code, inner=None):
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
    if inner is not None:
        assert body["error"]["innererror"]["code"] == inner, body
    return body["error"]["message"]


def test_image_analysis_sdk_gets_azures_typed_errors(stack, png):
    from azure.ai.vision.imageanalysis.models import VisualFeatures
    from azure.core.exceptions import HttpResponseError
    client = image_analysis_client(stack)
    with pytest.raises(HttpResponseError) as raised:
        client.analyze(image_data=png, visual_features=[VisualFeatures.READ, VisualFeatures.CAPTION])
    assert raised.value.status_code == 400
    assert raised.value.error.code == "InvalidRequest"
    assert raised.value.error.innererror["code"] == "NotSupportedVisualFeature"
    with pytest.raises(HttpResponseError) as raised:
        client.analyze_from_url(image_url="https://example.com/receipt.jpg", visual_features=[VisualFeatures.READ])
    assert raised.value.status_code == 400
    assert raised.value.error.innererror["code"] == "InvalidImageUrl"
    assert "does not fetch" in raised.value.error.message
    with pytest.raises(HttpResponseError) as raised:
        client.analyze(image_data=b"not an image at all", visual_features=[VisualFeatures.READ])
    assert raised.value.status_code == 400
    assert raised.value.error.innererror["code"] == "InvalidImageFormat"
    serves(stack, png)


@pytest.mark.parametrize("query, body, content_type, status, inner", [
    ("features=read", b"x", "application/octet-stream", 400, "BadArgument"),
    ("api-version=1999-01-01&features=read", b"x", "application/octet-stream", 400, "BadArgument"),
    ("api-version=2023-10-01", b"x", "application/octet-stream", 400, "BadArgument"),
    ("api-version=2023-10-01&features=tags", b"x", "application/octet-stream", 400, "NotSupportedVisualFeature"),
    ("api-version=2023-10-01&features=read,nonsense", b"x", "application/octet-stream", 400, "NotSupportedVisualFeature"),
    ("api-version=2023-10-01&features=read", b"", "application/octet-stream", 400, "InvalidImageSize"),
    ("api-version=2023-10-01&features=read", b"{nope", "application/json", 400, "BadArgument"),
    ("api-version=2023-10-01&features=read", b"x=1", "application/x-www-form-urlencoded", 415, "UnsupportedMediaType"),
])
def test_image_analysis_bad_input_gets_azures_error(stack, png, query, body, content_type, status, inner):
    got, headers, reply = http(stack, "POST", "/computervision/imageanalysis:analyze?" + query, body, {"Content-Type": content_type})
    assert got == status, reply
    image_analysis_error(reply, "InvalidRequest", inner)
    assert headers["x-ms-error-code"] == "InvalidRequest"
    serves(stack, png)


def test_image_analysis_misses_and_limits_in_azures_shape(stack, png):
    status, _, body = http(stack, "GET", "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read")
    assert status == 405
    image_analysis_error(body, "405")
    status, _, body = http(stack, "POST", "/computervision/nothing", b"x", {"Content-Type": "application/octet-stream"})
    assert status == 404
    image_analysis_error(body, "404")
    conn = http_client_connection(stack)
    try:
        conn.putrequest("POST", "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read")
        conn.putheader("Content-Type", "application/octet-stream")
        conn.putheader("Content-Length", str(17 << 20))
        conn.endheaders()
        r = conn.getresponse()
        assert r.status == 413
        image_analysis_error(json.loads(r.read()), "InvalidRequest", "InvalidImageSize")
    finally:
        conn.close()
    serves(stack, png)


# ---------------------------------------------------------------------------
# Credentials: a bearer token goes to the broker, which checks it
# ---------------------------------------------------------------------------

@pytest.fixture
def auth_stack(quire_bin, ctx, start_broker, procs, tmp_path):
    import subprocess
    from conftest import wait_service
    data = tmp_path / "tokens"
    added = subprocess.run([quire_bin, "clients", "add", "capture", "--scope", "ocr", "--json", "--data", str(data)],
                           capture_output=True, timeout=60, env=dict(os.environ, XDG_DATA_HOME=str(tmp_path / "xdg")))
    assert added.returncode == 0, added.stderr
    client = json.loads(added.stdout)
    broker = start_broker(data=str(tmp_path / "jobs"), auth="on")
    procs.append(Proc([quire_bin, "worker", "token", "--broker", broker.url, "--data", str(data)], tmp_path / "token.log"))
    procs.append(Proc([quire_bin, "worker", "ocr", "--broker", broker.url, "--threads", "1"], tmp_path / "ocr.log"))
    wait_service(ctx, broker.url, b"auth.token")
    wait_service(ctx, broker.url, b"ocr", timeout=30)
    gateway, port = start_gateway(quire_bin, broker.url, tmp_path, log_name="gateway.log")
    procs.append(gateway)
    from conftest import call, new_dealer
    s = new_dealer(ctx, broker.url)
    try:
        reply = call(s, "mdp02", b"auth.token", json.dumps(dict(grant_type="client_credentials", client_id=client["client_id"],
                                                                 client_secret=client["client_secret"], scope="ocr")).encode(),
                     timeout=10)
    finally:
        s.close()
    token = json.loads(reply[-1][0])["access_token"]

    class AuthStack:
        pass
    st = AuthStack()
    st.port, st.gateway, st.token = port, gateway, token
    return st


def test_a_bearer_token_is_checked_by_the_broker_on_every_route(auth_stack, png):
    st = auth_stack
    content = base64.b64encode(png).decode()
    annotate = {"requests": [{"image": {"content": content}, "features": [{"type": "TEXT_DETECTION"}]}]}
    callable_body = {"data": {"image": {"content": content}, "features": {"type": "TEXT_DETECTION"}}}
    for headers in ({}, {"Authorization": "Bearer not.a.token"}):
        status, _, body = http(st, "POST", "/v1/images:annotate", annotate, headers)
        assert status == 401, body
        google_error(body, 401, "UNAUTHENTICATED")
        status, _, body = http(st, "POST", "/annotateImage", callable_body, headers)
        assert status == 401, body
        callable_error(body, "UNAUTHENTICATED")
        status, _, body = http(st, "POST", "/vision/v3.2/read/analyze", png, dict(headers, **{"Content-Type": "application/octet-stream"}))
        assert status == 401, body
        azure_error(body, "Unauthorized")
        status, _, body = http(st, "POST", IMAGE_ANALYSIS, png, dict(headers, **{"Content-Type": "application/octet-stream",
                                                                                 "Ocp-Apim-Subscription-Key": "not-a-token"}))
        assert status == 401, body
        image_analysis_error(body, "401")
    good = {"Authorization": "Bearer " + st.token}
    status, _, body = http(st, "POST", "/v1/images:annotate", annotate, good)
    assert status == 200, body
    assert body["responses"][0]["textAnnotations"][0]["description"].split() == WORDS
    status, _, body = http(st, "POST", "/annotateImage", callable_body, good)
    assert status == 200, body
    status, _, body = http(st, "POST", IMAGE_ANALYSIS, png, dict(good, **{"Content-Type": "application/octet-stream"}))
    assert status == 200, body
    assert [ln["text"] for b in body["readResult"]["blocks"] for ln in b["lines"]] == LINES
    status, headers, body = http(st, "POST", "/vision/v3.2/read/analyze", png, dict(good, **{"Content-Type": "application/octet-stream"}))
    assert status == 202, body
    path = "/" + headers["operation-location"].split("/", 3)[3]
    status, _, body = http(st, "GET", path)
    assert status == 401, body  # polling needs a token too
    deadline = time.monotonic() + 60
    while True:
        status, _, body = http(st, "GET", path, headers=good)
        assert status == 200, body
        if body["status"] not in ("notStarted", "running"):
            break
        assert time.monotonic() < deadline, body
        time.sleep(0.2)
    assert body["status"] == "succeeded", body


# ---------------------------------------------------------------------------
# HTTPS
# ---------------------------------------------------------------------------

def test_https_with_tls_cert_and_key(quire_bin, stack, png, tmp_path):
    import ssl
    import subprocess
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                           "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"],
                          capture_output=True, timeout=60)
    assert made.returncode == 0, made.stderr
    gateway, port = start_gateway(quire_bin, stack.url, tmp_path, "--tls-cert", str(cert), "--tls-key", str(key),
                                  log_name="gateway-tls.log", what="the TLS gateway to listen")
    try:
        context = ssl.create_default_context(cafile=str(cert))
        context.check_hostname = False
        conn = httpclient.HTTPSConnection("127.0.0.1", port, timeout=60, context=context)
        try:
            conn.request("POST", "/vision/v3.2/read/analyze", body=png, headers={"Content-Type": "application/octet-stream"})
            r = conn.getresponse()
            r.read()
            assert r.status == 202
            assert r.getheader("Operation-Location").startswith("https://127.0.0.1:%d/vision/v3.2/read/analyzeResults/" % port)
        finally:
            conn.close()
    finally:
        gateway.stop()
    assert gateway.p.returncode == 0, gateway.log_tail()
