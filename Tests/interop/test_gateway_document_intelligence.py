"""Azure AI Document Intelligence through `quire gateway`: the official SDKs of its two GA APIs,
unchanged, pointed at the gateway: `azure-ai-documentintelligence` (2024-11-30, `/documentintelligence`)
and `azure-ai-formrecognizer` (2023-07-31, `/formrecognizer`). `prebuilt-read` on a rendered page and a
PDF, `prebuilt-receipt` on a rendered receipt photo and a PDF receipt with every field decoded by the
SDK with its type, the service's errors as the SDKs raise them, API keys with auth on, and a worker
killed mid-analysis without the operation being lost.

Real processes: `quire broker --data` + `quire worker ocr` + `quire gateway` (once for the module; the
auth and worker-kill tests start their own).

The receipt-field tests (`test_receipt_fields_decode_*`) read the fields the worker finds
(QuireFields) on a US receipt: month-first date, dollars, a tip, items with their quantity first.
Needs: PyPI azure-ai-documentintelligence, azure-ai-formrecognizer, pillow, fpdf2; PDFium.
"""

import datetime
import io
import json
import os
import signal
import subprocess
import time

import pytest

import http_calls
import ocr_images as oi
from conftest import Broker, ThreadedWorker, start_gateway, wait_service
from test_gateway import gateway_stack
from test_gateway_auth import add_client
from test_ocr import Process, _env, quire_bin, start_stack, zctx  # noqa: F401 (fixtures)
from test_pdf_input import born_digital, scanned

PAGE = ["Quire reads documents", "for apps written for Azure"]
DI_VERSION = "2024-11-30"
FR_VERSION = "2023-07-31"

# A receipt as a till prints it: merchant, address, phone, date and time, items, subtotal, tax, tip, total.
MERCHANT = "BLUE HERON CAFE"
RECEIPT = [
    ("BLUE HERON CAFE", None),
    ("412 Harbor Street", None),
    ("Portland, OR 97204", None),
    ("Tel (503) 555-0142", None),
    ("03/14/2026", "12:34 PM"),
    ("2 Latte", "$9.00"),
    ("1 Blueberry Muffin", "$3.50"),
    ("1 Avocado Toast", "$8.25"),
    ("Subtotal", "$20.75"),
    ("Tax", "$1.66"),
    ("Tip", "$3.00"),
    ("Total", "$25.41"),
    ("Thank you for visiting", None),
]
ITEMS = [("Latte", 2, 9.00), ("Blueberry Muffin", 1, 3.50), ("Avocado Toast", 1, 8.25)]


def render_receipt(size=34, width=760):
    """The receipt, black on white: left column at the margin, amounts right-aligned, as a till prints."""
    from PIL import Image, ImageDraw
    f = oi.font("sans", size)
    margin, leading = 40, int(size * 1.6)
    img = Image.new("L", (width, margin * 2 + leading * len(RECEIPT)), 255)
    draw = ImageDraw.Draw(img)
    for i, (left, right) in enumerate(RECEIPT):
        y = margin + i * leading
        draw.text((margin, y), left, font=f, fill=0)
        if right:
            draw.text((width - margin - draw.textlength(right, font=f), y), right, font=f, fill=0)
    return img


def receipt_lines():
    return [left + (" " + right if right else "") for left, right in RECEIPT]


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    yield from gateway_stack(quire_bin, zctx, tmp_path_factory.mktemp("gateway-di-stack"), worker_threads=2)


@pytest.fixture(scope="module")
def page_png():
    buf = io.BytesIO()
    oi.render_lines(PAGE, size=40).image.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture(scope="module")
def receipt_jpeg():
    # A photo's format: JPEG, as a phone camera saves it.
    return oi.jpeg(render_receipt().convert("RGB"), quality=90)


@pytest.fixture(scope="module")
def receipt_pdf():
    class Drawing:
        image = render_receipt()
    return scanned([Drawing()], dpi=150)


def endpoint(stack):
    return "http://127.0.0.1:%d" % stack.port


def di_client(stack, key="not-checked"):
    from azure.ai.documentintelligence import DocumentIntelligenceClient
    from azure.core.credentials import AzureKeyCredential
    # polling_interval: the gateway says Retry-After: 1; a short interval keeps the tests quick either way.
    return DocumentIntelligenceClient(endpoint(stack), AzureKeyCredential(key), polling_interval=0.2)


def fr_client(stack, key="not-checked"):
    from azure.ai.formrecognizer import DocumentAnalysisClient
    from azure.core.credentials import AzureKeyCredential
    return DocumentAnalysisClient(endpoint(stack), AzureKeyCredential(key), polling_interval=0.2)


def di_analyze(stack, model, data, key="not-checked", **kwargs):
    poller = di_client(stack, key).begin_analyze_document(model, io.BytesIO(data), **kwargs)
    return poller.result(timeout=120)


def fr_analyze(stack, model, data, key="not-checked", **kwargs):
    poller = fr_client(stack, key).begin_analyze_document(model, data, **kwargs)
    return poller.result(timeout=120)


def check_spans(result):
    """Every word's and line's span is its text in `content` (Python indices: the SDK's unicodeCodePoint)."""
    for page in result.pages:
        for word in page.words:
            assert result.content[word.span.offset:word.span.offset + word.span.length] == word.content, word
        for line in page.lines:
            (span,) = line.spans
            assert result.content[span.offset:span.offset + span.length] == line.content, line


def polygon_values(polygon):
    """A polygon as flat numbers: the 2024 SDK gives floats, the 2023 SDK Points."""
    return [v for p in polygon for v in ((p.x, p.y) if hasattr(p, "x") else (p,))]


# ---------------------------------------------------------------------------
# prebuilt-read
# ---------------------------------------------------------------------------

def test_documentintelligence_sdk_reads_a_page(stack, page_png):
    result = di_analyze(stack, "prebuilt-read", page_png, string_index_type="unicodeCodePoint", locale="en-US")
    assert (result.model_id, result.api_version, result.string_index_type) == ("prebuilt-read", DI_VERSION, "unicodeCodePoint")
    assert result.content == "\n".join(PAGE)
    (page,) = result.pages
    assert (page.page_number, page.unit) == (1, "pixel")
    assert [ln.content for ln in page.lines] == PAGE
    assert [w.content for w in page.words] == " ".join(PAGE).split()
    assert all(0 < w.confidence <= 1 for w in page.words)
    assert all(len(w.polygon) == 8 and max(w.polygon[0::2]) <= page.width for w in page.words)
    assert [p.content for p in result.paragraphs] == ["\n".join(PAGE)]
    assert not result.documents
    check_spans(result)


def test_formrecognizer_sdk_reads_a_pdf_in_inches(stack):
    pages = [[(72, 72, "First page of the report")], [(144, 216, "Second page, two inches in")]]
    result = fr_analyze(stack, "prebuilt-read", born_digital(pages), pages="2")
    assert (result.model_id, result.api_version) == ("prebuilt-read", FR_VERSION)
    (page,) = result.pages
    assert (page.page_number, page.unit, page.width, page.height) == (2, "inch", 8.5, 11)
    assert [ln.content for ln in page.lines] == ["Second page, two inches in"]
    xs = [p.x for p in page.lines[0].polygon]
    assert abs(min(xs) - 2) < 0.05, xs
    assert result.content == "Second page, two inches in"
    check_spans(result)


def test_receipt_model_reads_the_receipt_text_with_both_sdks(stack, receipt_jpeg):
    # What does not depend on the field extraction: the model answers, and the text is the receipt's.
    for analyze in (di_analyze, fr_analyze):
        result = analyze(stack, "prebuilt-receipt", receipt_jpeg)
        assert result.model_id == "prebuilt-receipt"
        words = result.content.split()
        for token in ("BLUE", "HERON", "Harbor", "97204", "$25.41", "Subtotal", "Muffin"):
            assert token in words, (token, result.content)
        check_spans(result)


# ---------------------------------------------------------------------------
# prebuilt-receipt: every field, decoded by each SDK (needs the receipts branch)
# ---------------------------------------------------------------------------

def check_receipt_fields(document, field, kind):
    """`field(document, name)` → (type, value, content, bounding regions) in the SDK's own types."""
    from azure.ai.formrecognizer import AddressValue as FRAddress, CurrencyValue as FRCurrency
    from azure.ai.documentintelligence.models import AddressValue as DIAddress, CurrencyValue as DICurrency
    assert document.doc_type == "receipt"
    assert 0 < document.confidence <= 1
    assert [r.page_number for r in document.bounding_regions] == [1]

    kind_, value, content, regions = field(document, "MerchantName")
    assert kind_ == "string" and isinstance(value, str) and MERCHANT in value.upper(), value
    assert regions and regions[0].page_number == 1 and len(polygon_values(regions[0].polygon)) == 8

    kind_, value, _, _ = field(document, "MerchantAddress")
    assert kind_ == "address" and isinstance(value, (DIAddress, FRAddress)), value
    assert (value.house_number, value.road, value.city, value.state, value.postal_code) == ("412", "Harbor Street", "Portland", "OR", "97204"), value

    kind_, value, _, _ = field(document, "MerchantPhoneNumber")
    assert kind_ == "phoneNumber" and isinstance(value, str) and value.replace(" ", "").endswith("5035550142"), value

    kind_, value, _, _ = field(document, "TransactionDate")
    assert kind_ == "date" and value == datetime.date(2026, 3, 14), value
    kind_, value, _, _ = field(document, "TransactionTime")
    assert kind_ == "time" and isinstance(value, datetime.time) and (value.hour, value.minute) == (12, 34), value

    for name, amount in (("Subtotal", 20.75), ("TotalTax", 1.66), ("Tip", 3.00), ("Total", 25.41)):
        kind_, value, content, regions = field(document, name)
        assert kind_ == "currency" and isinstance(value, (DICurrency, FRCurrency)), (name, value)
        assert abs(value.amount - amount) < 0.005 and currency_parts(value)[1] == "$", (name, value)
        assert content and "%.2f" % amount in content and regions, (name, content)

    kind_, items, _, _ = field(document, "Items")
    assert kind_ == "array" and isinstance(items, list) and len(items) == len(ITEMS), items
    for item, (description, quantity, total) in zip(items, ITEMS):
        kind_, members = kind(item)
        assert kind_ == "object" and isinstance(members, dict), item
        d_kind, d_value = kind(members["Description"])
        assert d_kind == "string" and d_value == description, members["Description"]
        q_kind, q_value = kind(members["Quantity"])
        assert q_kind == "number" and q_value == quantity, members["Quantity"]
        t_kind, t_value = kind(members["TotalPrice"])
        assert t_kind == "currency" and abs(t_value.amount - total) < 0.005, members["TotalPrice"]


def currency_parts(value):
    """(code, symbol) of a currency value: `currency_code`/`currency_symbol` in the 2024 SDK, `code`/`symbol` in 3.3."""
    if hasattr(value, "currency_code"):
        return value.currency_code, value.currency_symbol
    return value.code, value.symbol


def di_field(document, name):
    f = document.fields[name]
    return di_kind(f) + (f.content, f.bounding_regions)


def di_kind(f):
    member = {"string": "value_string", "date": "value_date", "time": "value_time", "phoneNumber": "value_phone_number",
              "number": "value_number", "integer": "value_integer", "currency": "value_currency", "address": "value_address",
              "array": "value_array", "object": "value_object"}[f.type]
    return f.type, getattr(f, member)


def fr_field(document, name):
    f = document.fields[name]
    return fr_kind(f) + (f.content, f.bounding_regions)


# azure-ai-formrecognizer 3.3 renames three wire types in `value_type` (its adjust_value_type).
FR_TYPES = {"list": "array", "float": "number", "dictionary": "object"}


def fr_kind(f):
    """(wire type, value) of a 3.3 DocumentField: its `value_type` in the wire's words, and its `value`."""
    return FR_TYPES.get(f.value_type, f.value_type), f.value


def check_field_spans(result, document, names):
    for name in names:
        f = document.fields[name]
        assert f.spans, (name, f)
        assert " ".join(result.content[s.offset:s.offset + s.length] for s in f.spans).split() == f.content.split(), (name, f.spans)


@pytest.mark.parametrize("source", ["photo", "pdf"])
def test_receipt_fields_decode_with_the_documentintelligence_sdk(stack, receipt_jpeg, receipt_pdf, source):
    result = di_analyze(stack, "prebuilt-receipt", receipt_jpeg if source == "photo" else receipt_pdf, locale="en-US",
                        string_index_type="unicodeCodePoint")
    (document,) = result.documents
    check_receipt_fields(document, di_field, di_kind)
    check_field_spans(result, document, ["MerchantName", "Total"])
    assert result.pages[0].unit == ("pixel" if source == "photo" else "inch")


@pytest.mark.parametrize("source", ["photo", "pdf"])
def test_receipt_fields_decode_with_the_formrecognizer_sdk(stack, receipt_jpeg, receipt_pdf, source):
    result = fr_analyze(stack, "prebuilt-receipt", receipt_jpeg if source == "photo" else receipt_pdf, locale="en-US")
    (document,) = result.documents
    check_receipt_fields(document, fr_field, fr_kind)
    check_field_spans(result, document, ["MerchantName", "Total"])


# ---------------------------------------------------------------------------
# Every field type through both SDKs, from a scripted `ocr` worker (independent of the extraction)
# ---------------------------------------------------------------------------

def box(x, y, w, h):
    return {"x": x, "y": y, "width": w, "height": h}


def quad(x, y, w, h):
    return [{"x": x, "y": y}, {"x": x + w, "y": y}, {"x": x + w, "y": y + h}, {"x": x, "y": y + h}]


def scripted_line(words, y):
    placed, x = [], 40
    for text in words:
        w = 18 * len(text)
        placed.append({"text": text, "boundingBox": box(x, y, w, 30), "polygon": quad(x, y, w, 30), "confidence": 0.93,
                       "languages": ["en"], "break": "space", "symbols": []})
        x += w + 14
    return {"text": " ".join(words), "boundingBox": box(40, y, x - 54, 30), "polygon": quad(40, y, x - 54, 30), "confidence": 0.93,
            "languages": ["en"], "direction": "ltr", "words": placed}


SCRIPTED_LINES = [["Café", "Lumière"], ["12", "Rue", "de", "Rivoli,", "75001", "Paris"], ["+33", "1", "42", "60", "00", "00"],
                  ["14/03/2026", "12:34"], ["2", "Tarte", "€9.00"], ["Items:", "2"], ["Total", "€9.00"]]


def scripted_field(kind, content, line=None, **values):
    f = {"type": kind, "confidence": 0.875}
    if content is not None:
        f["content"] = content
    if line is not None:
        ln = scripted_line(SCRIPTED_LINES[line], 40 + 50 * line)
        f["boundingBox"], f["polygon"] = ln["boundingBox"], ln["polygon"]
    f.update(values)
    return f


def scripted_result():
    """An `ocr` result as a worker with the receipt extraction sends it: one page, one receipt, a
    field of every type Document Intelligence has for receipts (and an integer)."""
    lines = [scripted_line(words, 40 + 50 * i) for i, words in enumerate(SCRIPTED_LINES)]
    euro = lambda amount: {"amount": amount, "currencyCode": "EUR", "currencySymbol": "€"}  # noqa: E731
    fields = {
        "MerchantName": scripted_field("string", "Café Lumière", 0, valueString="Café Lumière"),
        "MerchantAddress": scripted_field("address", "12 Rue de Rivoli, 75001 Paris", 1, valueAddress={
            "houseNumber": "12", "road": "Rue de Rivoli", "streetAddress": "12 Rue de Rivoli", "postalCode": "75001", "city": "Paris",
            "countryRegion": "FRA"}),
        "MerchantPhoneNumber": scripted_field("phoneNumber", "+33 1 42 60 00 00", 2, valuePhoneNumber="+33142600000"),
        "TransactionDate": scripted_field("date", "14/03/2026", 3, valueDate="2026-03-14"),
        "TransactionTime": scripted_field("time", "12:34", 3, valueTime="12:34:00"),
        "Items": scripted_field("array", None, valueArray=[scripted_field("object", "2 Tarte €9.00", 4, valueObject={
            "Description": scripted_field("string", "Tarte", 4, valueString="Tarte"),
            "Quantity": scripted_field("number", "2", 4, valueNumber=2),
            "TotalPrice": scripted_field("currency", "€9.00", 4, valueCurrency=euro(9.0)),
        })]),
        "ItemCount": scripted_field("integer", "2", 5, valueInteger=2),
        "Total": scripted_field("currency", "€9.00", 6, valueCurrency=euro(9.0)),
    }
    page = {"pageNumber": 1, "width": 800, "height": 600, "unit": "pixel", "rotation": 0, "mirrored": False, "deskewAngle": 0,
            "transform": [1, 0, 0, 0, 1, 0], "recognitionScale": 1, "text": "", "confidence": 0.93, "languages": ["en"],
            "blocks": [{"text": "", "boundingBox": box(40, 40, 600, 340), "polygon": quad(40, 40, 600, 340), "confidence": 0.93,
                        "languages": ["en"], "paragraphs": [{"text": "", "boundingBox": box(40, 40, 600, 340), "polygon": quad(40, 40, 600, 340),
                                                             "confidence": 0.93, "languages": ["en"], "lines": lines}]}],
            "documents": [{"kind": "receipt", "boundingBox": box(30, 30, 700, 360), "polygon": quad(30, 30, 700, 360), "confidence": 0.9,
                           "fields": fields}]}
    return {"text": "", "pages": [page], "metadata": {"engine": "scripted", "languages": ["en"], "mode": "document", "format": "png",
                                                      "pageCount": 1, "timings": {"decodeMs": 0, "recognizeMs": 0, "encodeMs": 0}, "steps": []}}


@pytest.fixture(scope="module")
def scripted(quire_bin, zctx, tmp_path_factory, page_png):
    """A broker and the gateway with a scripted `ocr` worker that answers every image with `scripted_result`
    and records the request frames it got."""
    log_dir = tmp_path_factory.mktemp("gateway-di-scripted")
    broker = Broker(zctx, log_dir, stats="off", data=str(log_dir / "jobs")).wait_ready()
    answer = json.dumps(scripted_result()).encode()
    worker = ThreadedWorker(zctx, broker.url, b"ocr", on_request=lambda w, addr, body: w.final(addr, answer))
    worker.start()
    gateway = None
    try:
        wait_service(zctx, broker.url, b"ocr")
        gateway, port = start_gateway(quire_bin, broker.url, log_dir)
        broker.port, broker.worker = port, worker
        yield broker
    finally:
        if gateway:
            gateway.stop()
        worker.stop()
        broker.stop()


@pytest.mark.parametrize("sdk", ["documentintelligence", "formrecognizer"])
def test_every_field_type_decodes_in_both_sdks(scripted, page_png, sdk):
    from azure.ai.documentintelligence.models import AddressValue as DIAddress, CurrencyValue as DICurrency
    from azure.ai.formrecognizer import AddressValue as FRAddress, CurrencyValue as FRCurrency
    before = len(scripted.worker.requests)
    if sdk == "documentintelligence":
        result = di_analyze(scripted, "prebuilt-receipt", page_png, string_index_type="unicodeCodePoint")
        field, kind, address_type, currency_type = di_field, di_kind, DIAddress, DICurrency
    else:
        result = fr_analyze(scripted, "prebuilt-receipt", page_png)
        field, kind, address_type, currency_type = fr_field, fr_kind, FRAddress, FRCurrency
    # The worker was asked for a receipt's fields.
    (request, image) = scripted.worker.requests[before]
    assert json.loads(request)["fields"] == ["receipt"] and image == page_png
    (document,) = result.documents
    assert document.doc_type == "receipt" and document.confidence == 0.9
    assert [r.page_number for r in document.bounding_regions] == [1]
    assert polygon_values(document.bounding_regions[0].polygon) == [30, 30, 730, 30, 730, 390, 30, 390]

    expected = {
        "MerchantName": ("string", "Café Lumière"),
        "MerchantPhoneNumber": ("phoneNumber", "+33142600000"),
        "TransactionDate": ("date", datetime.date(2026, 3, 14)),
        "TransactionTime": ("time", datetime.time(12, 34)),
        "ItemCount": ("integer", 2),
    }
    for name, (want_kind, want_value) in expected.items():
        got_kind, value, content, regions = field(document, name)
        assert (got_kind, value) == (want_kind, want_value), name
        assert type(value) is type(want_value), (name, type(value))
        assert regions[0].page_number == 1 and len(polygon_values(regions[0].polygon)) == 8, name
    got_kind, address, _, _ = field(document, "MerchantAddress")
    assert got_kind == "address" and isinstance(address, address_type)
    assert (address.house_number, address.road, address.street_address, address.postal_code, address.city, address.country_region) == (
        "12", "Rue de Rivoli", "12 Rue de Rivoli", "75001", "Paris", "FRA")
    got_kind, total, content, _ = field(document, "Total")
    assert got_kind == "currency" and isinstance(total, currency_type)
    assert (total.amount, currency_parts(total), content) == (9.0, ("EUR", "€"), "€9.00")
    got_kind, items, _, _ = field(document, "Items")
    assert got_kind == "array" and len(items) == 1
    item_kind, members = kind(items[0])
    assert item_kind == "object" and set(members) == {"Description", "Quantity", "TotalPrice"}
    assert kind(members["Description"]) == ("string", "Tarte")
    assert kind(members["Quantity"]) == ("number", 2.0) and isinstance(kind(members["Quantity"])[1], float)
    price_kind, price = kind(members["TotalPrice"])
    assert price_kind == "currency" and price.amount == 9.0
    # Spans into content, in Python's indices, for fields whose words are on the page; "€9.00" is
    # printed twice, and the total's span is the one on its own line.
    check_spans(result)
    for name in ("MerchantName", "MerchantAddress", "MerchantPhoneNumber", "Total"):
        f = document.fields[name]
        assert " ".join(result.content[s.offset:s.offset + s.length] for s in f.spans) == f.content, name
    total_line = result.pages[0].lines[6].spans[0]
    assert total_line.offset <= document.fields["Total"].spans[0].offset < total_line.offset + total_line.length


# ---------------------------------------------------------------------------
# Errors, as the SDKs raise them
# ---------------------------------------------------------------------------

def inner_code(error):
    """The `innererror` code of the error body the SDK raised, as it parsed it."""
    return (error.error.innererror or {}).get("code")


def test_errors_in_the_services_shape_through_both_sdks(stack, page_png):
    from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
    for analyze in (di_analyze, fr_analyze):
        with pytest.raises(HttpResponseError) as raised:
            analyze(stack, "prebuilt-read", b"this is not an image, nor a PDF")
        assert raised.value.status_code == 400
        assert raised.value.error.code == "InvalidRequest"
        assert inner_code(raised.value) == "InvalidContent", raised.value

        with pytest.raises(ResourceNotFoundError) as raised:
            analyze(stack, "prebuilt-invoice", page_png)
        assert raised.value.status_code == 404
        assert raised.value.error.code == "NotFound"
        assert inner_code(raised.value) == "ModelNotFound", raised.value

        with pytest.raises(HttpResponseError) as raised:
            analyze(stack, "prebuilt-read", page_png, pages="3-1")
        assert raised.value.status_code == 400
        assert inner_code(raised.value) == "InvalidParameter", raised.value


def test_a_file_that_looks_right_but_is_broken_fails_its_operation(stack):
    # A PNG signature with nothing behind it passes the check at the door; the worker cannot read it, and
    # the operation fails with the service's InvalidContent, which the SDK's poller raises.
    from azure.core.exceptions import HttpResponseError
    broken = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    with pytest.raises(HttpResponseError) as raised:
        di_analyze(stack, "prebuilt-read", broken)
    assert raised.value.error.code == "InvalidRequest", raised.value
    assert raised.value.error.innererror["code"] == "InvalidContent", raised.value


def test_raw_http_json_sources_and_unknown_parameters(stack, page_png):
    import base64
    path = "/documentintelligence/documentModels/prebuilt-read:analyze?api-version=%s&features=ocrHighResolution&outputContentFormat=text" % DI_VERSION
    status, headers, body = http_calls.request(stack.port, "POST", path, {"base64Source": base64.b64encode(page_png).decode()})
    assert status == 202, body
    location = headers["operation-location"]
    assert "/documentintelligence/documentModels/prebuilt-read/analyzeResults/" in location and location.endswith("?api-version=" + DI_VERSION)
    final = poll(stack, location)
    assert final["status"] == "succeeded" and final["analyzeResult"]["content"] == "\n".join(PAGE)
    status, _, body = http_calls.request(stack.port, "POST", path, {"urlSource": "https://example.com/receipt.jpg"})
    assert status == 400 and body["error"]["innererror"]["code"] == "InvalidContentSourceFormat", body
    status, _, body = http_calls.request(stack.port, "GET", "/documentintelligence/documentModels/prebuilt-read/analyzeResults/"
                                         + "0123456789abcdef0123456789abcdef?api-version=" + DI_VERSION)
    assert status == 404 and body["error"]["code"] == "NotFound", body
    status, _, body = http_calls.request(stack.port, "POST", path.replace(DI_VERSION, FR_VERSION), page_png, {"Content-Type": "image/png"})
    assert status == 404 and body == {"error": {"code": "404", "message": "Resource not found"}}, body


def poll(stack, location, timeout=60):
    path = "/" + location.split("/", 3)[3]
    deadline = time.monotonic() + timeout
    while True:
        status, _, body = http_calls.request(stack.port, "GET", path)
        assert status == 200, body
        if body["status"] not in ("notStarted", "running"):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.2)


# ---------------------------------------------------------------------------
# API keys with auth on
# ---------------------------------------------------------------------------

def test_keys_with_auth_on(quire_bin, zctx, tmp_path, page_png):
    from azure.core.exceptions import ClientAuthenticationError
    data = tmp_path / "tokens"
    app = add_client(quire_bin, data, "app")
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--auth", "on", "--data", str(tmp_path / "jobs")],
        [quire_bin, "worker", "token", "--broker", "{url}", "--data", str(data)],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    gateway = None
    try:
        gateway, port = start_gateway(quire_bin, st.url, tmp_path)
        wait_service(zctx, st.url, b"auth.token")
        st.port = port
        result = di_analyze(st, "prebuilt-read", page_png, key=app["api_key"])
        assert [ln.content for ln in result.pages[0].lines] == PAGE
        for analyze in (di_analyze, fr_analyze):
            with pytest.raises(ClientAuthenticationError) as raised:
                analyze(st, "prebuilt-read", page_png, key="qk_" + "A" * 43)
            assert raised.value.status_code == 401 and raised.value.error.code == "401"
            assert "invalid subscription key" in raised.value.error.message
        status, _, body = http_calls.request(port, "POST", "/formrecognizer/documentModels/prebuilt-read:analyze?api-version=" + FR_VERSION,
                                             page_png, {"Content-Type": "image/png"})
        assert status == 401 and body["error"]["code"] == "401" and "missing subscription key" in body["error"]["message"], body
    finally:
        if gateway:
            gateway.stop()
        for p in reversed(st.processes):
            p.stop()


# ---------------------------------------------------------------------------
# Durable: a worker killed mid-analysis
# ---------------------------------------------------------------------------

def job_status(quire_bin, url, job):
    p = subprocess.run([quire_bin, "status", job, "--broker", url], capture_output=True, timeout=60, env=_env())
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


@pytest.mark.timeout_s(300)
def test_a_worker_killed_mid_analysis_loses_nothing(quire_bin, zctx, tmp_path):
    pages = [oi.render_lines(["Receipt archive page %d" % n, "kept when a worker dies"], "sans", 40) for n in range(1, 7)]
    document = scanned(pages, dpi=150)
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(tmp_path / "jobs"), "--heartbeat-interval-ms", "250"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--heartbeat-interval-ms", "250"],
    ])
    gateway, replacement = None, None
    try:
        gateway, port = start_gateway(quire_bin, st.url, tmp_path)
        st.port = port
        poller = di_client(st).begin_analyze_document("prebuilt-read", io.BytesIO(document))
        job = poller.details["operation_id"]
        # Wait until the only worker is reading it, then kill it without warning.
        deadline = time.monotonic() + 60
        while job_status(quire_bin, st.url, job)["state"] != "running":
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.1)
        st.processes[1].p.send_signal(signal.SIGKILL)
        st.processes[1].p.wait(timeout=10)
        assert job_status(quire_bin, st.url, job)["state"] in ("queued", "running")
        # Another worker comes up; the SDK's poller, still polling the same operation, gets every page.
        replacement = Process([quire_bin, "worker", "ocr", "--broker", st.url, "--threads", "1", "--heartbeat-interval-ms", "250"],
                              tmp_path / "replacement.log")
        result = poller.result(timeout=240)
        assert [p.page_number for p in result.pages] == list(range(1, 7))
        for page, drawn in zip(result.pages, pages):
            assert [ln.content for ln in page.lines] == drawn.lines
        check_spans(result)
        assert job_status(quire_bin, st.url, job)["attempts"] >= 2
    finally:
        if replacement:
            replacement.stop()
        if gateway:
            gateway.stop()
        for p in reversed(st.processes):
            p.stop()
