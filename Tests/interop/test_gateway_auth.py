"""`quire gateway` with auth on: the OAuth 2.0 token endpoint (RFC 6749) and API keys.

Real processes: `quire broker --auth on` + `quire worker token` + `quire worker ocr` + `quire
gateway`, once for the module. The token endpoint is driven with the exact form-encoded request of
the Azure AD tutorials (and HTTP Basic), and every refusal is checked against RFC 6749 §5.2's body
and status. API keys go through the official clients: the Computer Vision SDK's
`CognitiveServicesCredentials(key)` (Ocp-Apim-Subscription-Key) and google-cloud-vision's REST
transport with `client_options={"api_key": …}` (x-goog-api-key), plus `?key=`. Unknown and revoked
keys get the imitated API's exact body, and the gateway keeps serving.
Needs: PyPI google-cloud-vision, azure-cognitiveservices-vision-computervision, pillow.
"""

import base64
import io
import json
import re
import subprocess
import time
import urllib.parse

import pytest

import http_calls
import ocr_images as oi
from conftest import start_gateway, wait_service
from test_ocr import quire_bin, start_stack, zctx  # noqa: F401 (fixtures)

LINES = ["Quire reads receipts", "and invoices too"]
WORDS = " ".join(LINES).split()
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
AZURE_BAD_KEY = {"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint. "
                           "Make sure to provide a valid key for an active subscription and use a correct regional API "
                           "endpoint for your resource."}}
# RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E.
DESCRIPTION = re.compile(r'^[\x20\x21\x23-\x5b\x5d-\x7e]*$')
# The gateway reuses a key's token this long; revocation is checked against it.
KEY_CACHE_S = 2


def clients(quire_bin, data, *args):
    done = subprocess.run([quire_bin, "clients", *args, "--data", str(data)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def add_client(quire_bin, data, name, scope="ocr", api_key=True):
    args = ["add", name, "--scope", scope, "--json"] + (["--api-key"] if api_key else [])
    return json.loads(clients(quire_bin, data, *args))


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("gateway-auth")
    data = log_dir / "tokens"
    app = add_client(quire_bin, data, "app")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--auth", "on", "--data", str(log_dir / "jobs")],
        [quire_bin, "worker", "token", "--broker", "{url}", "--data", str(data)],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    try:
        gateway, port = start_gateway(quire_bin, st.url, log_dir, "--api-key-cache-s", str(KEY_CACHE_S))
    except BaseException:
        for p in reversed(st.processes):
            p.stop()
        raise
    try:
        # start_stack waits for `ocr` only; the token worker may register later (seen when other modules ran first).
        wait_service(zctx, st.url, b"auth.token")
        st.gateway, st.port, st.data, st.app, st.quire = gateway, port, data, app, quire_bin
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
    """One request to the stack's gateway on a fresh connection: (status, lower-cased headers, parsed JSON or raw bytes)."""
    return http_calls.request(stack.port, method, path, body, headers, timeout)


annotate_body = http_calls.annotate_body


def serves(stack, png, headers):
    status, _, body = http(stack, "POST", "/v1/images:annotate", annotate_body(png), headers)
    assert status == 200, body
    assert body["responses"][0]["textAnnotations"][0]["description"].split() == WORDS
    assert stack.gateway.alive()


def basic(client_id, secret):
    pair = urllib.parse.quote(client_id, safe="") + ":" + urllib.parse.quote(secret, safe="")
    return "Basic " + base64.b64encode(pair.encode()).decode()


def tutorial_form(client_id, secret, grant="client_credentials"):
    # The Azure AD v1 client-credentials request, byte for byte as the tutorials build it.
    return "grant_type=%s&client_id=%s&client_secret=%s&resource=%s" % (
        grant, urllib.parse.quote(client_id, safe=""), urllib.parse.quote(secret, safe=""),
        urllib.parse.quote("https://cognitiveservices.azure.com/", safe=""))


def oauth_headers(headers):
    assert headers["content-type"] == "application/json;charset=UTF-8", headers
    assert headers["cache-control"] == "no-store", headers
    assert headers["pragma"] == "no-cache", headers


def oauth_error(status, headers, body, expected_status, code):
    assert status == expected_status, (status, body)
    oauth_headers(headers)
    assert set(body) == {"error", "error_description"}, body
    assert body["error"] == code, body
    assert body["error_description"] and DESCRIPTION.match(body["error_description"]), body
    assert ("www-authenticate" in headers) == (expected_status == 401), headers
    if expected_status == 401:
        assert headers["www-authenticate"].startswith('Basic realm="quire"'), headers


# ---------------------------------------------------------------------------
# POST /oauth2/token
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/oauth2/token", "/contoso.onmicrosoft.com/oauth2/token"])
def test_the_tutorials_token_request_gets_an_rfc_6749_token_that_the_broker_accepts(stack, png, path):
    app = stack.app
    status, headers, body = http(stack, "POST", path, tutorial_form(app["client_id"], app["client_secret"]), FORM)
    assert status == 200, body
    oauth_headers(headers)
    assert set(body) == {"access_token", "token_type", "expires_in", "scope"}, body
    assert body["token_type"] == "Bearer"
    assert type(body["expires_in"]) is int and 0 < body["expires_in"] <= 900
    assert body["scope"] == "ocr"
    assert body["access_token"].count(".") == 2
    # The broker has auth on: no token is 401, the endpoint's token reads the image.
    status, _, reply = http(stack, "POST", "/v1/images:annotate", annotate_body(png))
    assert status == 401, reply
    serves(stack, png, {"Authorization": "Bearer " + body["access_token"]})


def test_http_basic_client_authentication(stack, png):
    app = stack.app
    headers = dict(FORM, Authorization=basic(app["client_id"], app["client_secret"]))
    status, got, body = http(stack, "POST", "/oauth2/token", "grant_type=client_credentials&scope=ocr", headers)
    assert status == 200, body
    oauth_headers(got)
    assert body["token_type"] == "Bearer" and body["scope"] == "ocr"
    serves(stack, png, {"Authorization": "Bearer " + body["access_token"]})


def test_refusals_have_rfc_6749_bodies_and_statuses(stack, png):
    app = stack.app
    cid, secret = app["client_id"], app["client_secret"]
    cases = [
        # (body, headers, status, error)
        (tutorial_form(cid, secret + "x"), FORM, 400, "invalid_client"),
        (tutorial_form("qc_nobody", secret), FORM, 400, "invalid_client"),
        ("grant_type=client_credentials", dict(FORM, Authorization=basic(cid, secret + "x")), 401, "invalid_client"),
        ("grant_type=client_credentials", dict(FORM, Authorization=basic("qc_nobody", secret)), 401, "invalid_client"),
        ("grant_type=client_credentials", FORM, 401, "invalid_client"),
        (tutorial_form(cid, secret, grant="password"), FORM, 400, "unsupported_grant_type"),
        (tutorial_form(cid, secret, grant="authorization_code"), FORM, 400, "unsupported_grant_type"),
        (tutorial_form(cid, secret) + "&scope=admin", FORM, 400, "invalid_scope"),
        ("client_id=%s&client_secret=%s" % (cid, secret), FORM, 400, "invalid_request"),
        (tutorial_form(cid, secret) + "&scope=ocr&scope=ocr", FORM, 400, "invalid_request"),
        (tutorial_form(cid, secret), dict(FORM, Authorization=basic(cid, secret)), 400, "invalid_request"),
        (json.dumps({"grant_type": "client_credentials", "client_id": cid, "client_secret": secret}), {"Content-Type": "application/json"},
         400, "invalid_request"),
        (tutorial_form(cid, secret), {"Content-Type": "text/plain"}, 400, "invalid_request"),
        (tutorial_form(cid, secret) + "&pad=" + "x" * 9000, FORM, 413, "invalid_request"),
    ]
    for body, headers, expected, code in cases:
        status, got, reply = http(stack, "POST", "/oauth2/token", body, headers)
        oauth_error(status, got, reply, expected, code)
        assert secret not in json.dumps(reply)
    status, got, reply = http(stack, "GET", "/oauth2/token")
    assert status == 405 and got["allow"] == "POST", reply
    assert reply["error"] == "invalid_request"
    status, _, reply = http(stack, "GET", "/tenant/oauth2/token")
    assert status == 405, reply
    serves(stack, png, {"Authorization": "Bearer " + token(stack)})


def token(stack):
    status, _, body = http(stack, "POST", "/oauth2/token", tutorial_form(stack.app["client_id"], stack.app["client_secret"]), FORM)
    assert status == 200, body
    return body["access_token"]


def test_requests_oauthlib_style_client_gets_a_token(stack):
    # `requests` with auth=(id, secret): what most OAuth client libraries send.
    import requests
    r = requests.post("http://127.0.0.1:%d/oauth2/token" % stack.port, data={"grant_type": "client_credentials"},
                      auth=(stack.app["client_id"], stack.app["client_secret"]), timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/json;charset=UTF-8"
    assert r.json()["token_type"] == "Bearer"


# ---------------------------------------------------------------------------
# API keys through the official clients
# ---------------------------------------------------------------------------

def azure_client(stack, key):
    from azure.cognitiveservices.vision.computervision import ComputerVisionClient
    from msrest.authentication import CognitiveServicesCredentials
    return ComputerVisionClient("http://127.0.0.1:%d" % stack.port, CognitiveServicesCredentials(key))


def google_client(stack, key):
    from google.cloud import vision
    return vision.ImageAnnotatorClient(transport="rest", client_options={"api_endpoint": "http://127.0.0.1:%d" % stack.port, "api_key": key})


def azure_read(client, png):
    from azure.cognitiveservices.vision.computervision.models import OperationStatusCodes
    raw = client.read_in_stream(io.BytesIO(png), raw=True)
    operation_id = raw.headers["Operation-Location"].split("/")[-1]
    deadline = time.monotonic() + 60
    while True:
        result = client.get_read_result(operation_id)
        if result.status not in (OperationStatusCodes.not_started, OperationStatusCodes.running):
            return result
        assert time.monotonic() < deadline, result.status
        time.sleep(0.2)


def test_azure_sdk_with_a_subscription_key(stack, png):
    from azure.cognitiveservices.vision.computervision.models import OperationStatusCodes
    result = azure_read(azure_client(stack, stack.app["api_key"]), png)
    assert result.status == OperationStatusCodes.succeeded
    assert [line.text for line in result.analyze_result.read_results[0].lines] == LINES


def image_analysis_client(stack, key):
    from azure.ai.vision.imageanalysis import ImageAnalysisClient
    from azure.core.credentials import AzureKeyCredential
    return ImageAnalysisClient(endpoint="http://127.0.0.1:%d" % stack.port, credential=AzureKeyCredential(key))


def test_image_analysis_sdk_with_a_subscription_key(stack, png):
    from azure.ai.vision.imageanalysis.models import VisualFeatures
    result = image_analysis_client(stack, stack.app["api_key"]).analyze(image_data=png, visual_features=[VisualFeatures.READ])
    assert [line.text for block in result.read.blocks for line in block.lines] == LINES


def test_google_client_with_an_api_key_and_key_in_the_query(stack, png):
    from google.cloud import vision
    r = google_client(stack, stack.app["api_key"]).text_detection(image=vision.Image(content=png))
    assert not r.error.message
    assert r.text_annotations[0].description.split() == WORDS
    status, _, body = http(stack, "POST", "/v1/images:annotate?key=" + urllib.parse.quote(stack.app["api_key"]), annotate_body(png))
    assert status == 200, body
    assert body["responses"][0]["textAnnotations"][0]["description"].split() == WORDS
    callable_body = {"data": {"image": {"content": base64.b64encode(png).decode()}, "features": {"type": "TEXT_DETECTION"}}}
    status, _, body = http(stack, "POST", "/annotateImage", callable_body, {"x-goog-api-key": stack.app["api_key"]})
    assert status == 200, body
    assert body["result"]["fullTextAnnotation"]["text"].split() == WORDS


def expect_bad_key_everywhere(stack, png, key):
    from azure.cognitiveservices.vision.computervision.models import ComputerVisionOcrErrorException
    from google.api_core import exceptions
    from google.cloud import vision
    with pytest.raises(ComputerVisionOcrErrorException) as raised:
        azure_client(stack, key).read_in_stream(io.BytesIO(png), raw=True)
    assert raised.value.response.status_code == 401
    assert raised.value.response.json() == AZURE_BAD_KEY
    status, _, body = http(stack, "GET", "/vision/v3.2/read/analyzeResults/0123456789abcdef0123456789abcdef",
                           headers={"Ocp-Apim-Subscription-Key": key})
    assert (status, body) == (401, AZURE_BAD_KEY)
    with pytest.raises(exceptions.BadRequest) as raised:
        google_client(stack, key).text_detection(image=vision.Image(content=png))
    assert raised.value.reason == "API_KEY_INVALID"
    assert raised.value.domain == "googleapis.com"
    status, _, body = http(stack, "POST", "/v1/images:annotate?key=" + urllib.parse.quote(key), annotate_body(png))
    assert status == 400, body
    assert body == {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
                              "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                           "domain": "googleapis.com", "metadata": {"service": "vision.googleapis.com"}}]}}
    callable_body = {"data": {"image": {"content": base64.b64encode(png).decode()}, "features": {"type": "TEXT_DETECTION"}}}
    status, _, body = http(stack, "POST", "/annotateImage?key=" + urllib.parse.quote(key), callable_body)
    assert (status, body) == (401, {"error": {"status": "UNAUTHENTICATED", "message": "API key not valid. Please pass a valid API key."}})
    from azure.ai.vision.imageanalysis.models import VisualFeatures
    from azure.core.exceptions import HttpResponseError
    with pytest.raises(HttpResponseError) as raised:
        image_analysis_client(stack, key).analyze(image_data=png, visual_features=[VisualFeatures.READ])
    assert raised.value.status_code == 401
    assert raised.value.error.code == "401"
    assert raised.value.response.json() == AZURE_BAD_KEY


def test_unknown_keys_get_each_apis_own_refusal(stack, png):
    expect_bad_key_everywhere(stack, png, "qk_" + "A" * 43)
    expect_bad_key_everywhere(stack, png, "not-even-a-quire-key")
    serves(stack, png, {"x-goog-api-key": stack.app["api_key"]})


@pytest.mark.timeout_s(60)
def test_a_removed_key_stops_working_within_the_cache_lifetime(stack, png):
    other = add_client(stack.quire, stack.data, "revoked-soon")
    key = other["api_key"]
    listed = json.loads(clients(stack.quire, stack.data, "list", "--json"))
    assert {row["client_id"]: row["api_key"] for row in listed}[other["client_id"]] is True
    assert any(row["api_key"] is True for row in listed if row["client_id"] == stack.app["client_id"])
    assert key not in (stack.data / "auth" / "clients.json").read_text()
    serves(stack, png, {"x-goog-api-key": key})  # now cached at the gateway
    clients(stack.quire, stack.data, "remove", other["client_id"])
    removed = time.monotonic()
    while True:
        status, _, body = http(stack, "POST", "/v1/images:annotate", annotate_body(png), {"x-goog-api-key": key})
        if status == 400:
            break
        assert status == 200, body
        assert time.monotonic() - removed < KEY_CACHE_S + 5, "a removed key still works after the cache lifetime"
        time.sleep(0.2)
    assert body["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    assert time.monotonic() - removed <= KEY_CACHE_S + 5
    expect_bad_key_everywhere(stack, png, key)
    # A key removed before its first use never worked at all.
    never = add_client(stack.quire, stack.data, "never-used")
    clients(stack.quire, stack.data, "remove", never["client_id"])
    expect_bad_key_everywhere(stack, png, never["api_key"])
    serves(stack, png, {"x-goog-api-key": stack.app["api_key"]})


def test_a_key_whose_client_lacks_the_scope_is_forbidden(stack, png):
    echo_only = add_client(stack.quire, stack.data, "echo-only", scope="echo")
    status, _, body = http(stack, "POST", "/v1/images:annotate", annotate_body(png), {"x-goog-api-key": echo_only["api_key"]})
    assert status == 403, body
    assert body["error"]["status"] == "PERMISSION_DENIED"
    serves(stack, png, {"x-goog-api-key": stack.app["api_key"]})


def test_the_api_key_grant_the_gateway_sends_matches_the_schemas(stack):
    import jsonschema
    from conftest import REPO_ROOT
    request_schema = json.loads((REPO_ROOT / "proto-json" / "auth-token-request.schema.json").read_text())
    response_schema = json.loads((REPO_ROOT / "proto-json" / "auth-token-response.schema.json").read_text())
    for schema in (request_schema, response_schema):
        jsonschema.Draft202012Validator.check_schema(schema)
        for example in schema.get("examples", []):
            jsonschema.Draft202012Validator(schema).validate(example)
    # The frame as the gateway's TokenRequest encodes it (sorted keys), straight to auth.token.
    frame = {"api_key": stack.app["api_key"], "grant_type": "urn:quire:params:oauth:grant-type:api-key"}
    jsonschema.Draft202012Validator(request_schema).validate(frame)
    (reply,) = stack.call(b"auth.token", [json.dumps(frame, sort_keys=True, separators=(",", ":")).encode()])
    body = json.loads(reply)
    jsonschema.Draft202012Validator(response_schema).validate(body)
    assert body["token_type"] == "Bearer" and 0 < body["expires_in"] <= 120 and body["scope"] == "ocr"
    (refused,) = stack.call(b"auth.token", [json.dumps(dict(frame, api_key="qk_unknown")).encode()])
    error = json.loads(refused)["error"]
    assert error["code"] == "invalid_client" and "qk_unknown" not in error["message"]


@pytest.mark.timeout_s(90)
def test_a_key_waits_out_a_missing_token_worker_as_unavailable_not_as_a_bad_key(quire_bin, zctx, tmp_path, png):
    """A broker with auth on whose token worker is not connected yet (both just restarted): a key's
    request is unavailable for now (Cloud Vision's item status 14 UNAVAILABLE, as for a missing OCR
    worker), not 'API key not valid'; once the token worker is back the same key reads."""
    from test_ocr import Process
    data = tmp_path / "tokens"
    app = add_client(quire_bin, data, "app")
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--auth", "on"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    gateway = None
    try:
        gateway, port = start_gateway(quire_bin, st.url, tmp_path)
        st.port, st.gateway = port, gateway
        status, _, body = http(st, "POST", "/v1/images:annotate", annotate_body(png), {"x-goog-api-key": app["api_key"]})
        assert status == 200 and body["responses"][0]["error"]["code"] == 14, body
        assert "token worker" in body["responses"][0]["error"]["message"], body
        st.processes.append(Process([quire_bin, "worker", "token", "--broker", st.url, "--data", str(data)],
                                    tmp_path / "token-worker.log"))
        wait_service(zctx, st.url, b"auth.token")
        serves(st, png, {"x-goog-api-key": app["api_key"]})
    finally:
        if gateway:
            gateway.stop()
        for p in reversed(st.processes):
            p.stop()
