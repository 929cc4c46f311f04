"""PDFs through `quire gateway`: Azure Read 3.2 reads them (with Azure's `pages` selection, each page
measured in inches as Azure measures PDF pages), Read 2.0 in whole pixels, Cloud Vision's
`files:annotate` page by page (at most five, normalized polygons, page sizes in points), and the
routes that read only images (Image Analysis, Cloud Vision images:annotate) refuse them as those
services do.

Real processes: `quire broker` + `quire worker ocr` + `quire gateway` (once for the module); the Azure
calls go through azure-cognitiveservices-vision-computervision's own client, the Cloud Vision ones
through google-cloud-vision's REST transport.
Needs: PDFium (scripts/install-pdfium), PyPI fpdf2, pillow, the Azure SDK and google-cloud-vision.
"""

import base64
import io
import time

import pytest

import ocr_images as oi
from test_gateway import (IMAGE_ANALYSIS, azure_client, azure_error, gateway_stack, google_error, http, image_analysis_error,  # noqa: F401
                          png, poll_operation, serves, vision_client)
from test_ocr import quire_bin, zctx  # noqa: F401 (fixtures)
from test_pdf_input import born_digital, scanned

PAGES = [[(72, 72, "First page of the report")], [(144, 216, "Second page, two inches in")], [(72, 72, "Third page")]]


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    yield from gateway_stack(quire_bin, zctx, tmp_path_factory.mktemp("gateway-pdf-stack"), worker_threads=1)


def read_result(stack, body, query=""):
    """POST to Read 3.2 and poll the operation until it ends: its final JSON."""
    status, headers, answer = http(stack, "POST", "/vision/v3.2/read/analyze" + query, body, {"Content-Type": "application/pdf"})
    assert status == 202, answer
    return poll_operation(stack, headers["operation-location"])


def test_azure_sdk_reads_the_pages_asked_for_in_inches(stack):
    from azure.cognitiveservices.vision.computervision.models import OperationStatusCodes
    client = azure_client(stack)
    raw = client.read_in_stream(io.BytesIO(born_digital(PAGES)), pages=["2-3"], raw=True)
    operation_id = raw.headers["Operation-Location"].split("/")[-1]
    deadline = time.monotonic() + 60
    while True:
        result = client.get_read_result(operation_id)
        if result.status not in (OperationStatusCodes.not_started, OperationStatusCodes.running):
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert result.status == OperationStatusCodes.succeeded
    second, third = result.analyze_result.read_results
    assert (second.page, third.page) == (2, 3)
    for page in (second, third):
        assert (page.unit, page.width, page.height) == ("inch", 8.5, 11)
    (line,) = second.lines
    assert line.text == "Second page, two inches in"
    # Drawn 2 inches from the left with its baseline 3 inches from the top: the quad, in inches.
    xs, ys = line.bounding_box[0::2], line.bounding_box[1::2]
    assert abs(min(xs) - 2) < 0.02 and 2.8 < min(ys) < 3 and 3 < max(ys) < 3.1, line.bounding_box
    assert [w.text for w in line.words] == ["Second", "page,", "two", "inches", "in"]
    assert [ln.text for ln in third.lines] == ["Third page"]


def test_a_scanned_pdf_reads_by_ocr_in_inches(stack):
    drawn = oi.render_lines(["A scanned page", "read through Azure"], "sans", 40)
    body = read_result(stack, scanned([drawn], dpi=200))
    assert body["status"] == "succeeded"
    (page,) = body["analyzeResult"]["readResults"]
    assert page["unit"] == "inch"
    assert abs(page["width"] - drawn.image.width / 200) < 0.01 and abs(page["height"] - drawn.image.height / 200) < 0.01
    assert [ln["text"] for ln in page["lines"]] == drawn.lines


def test_read_20_measures_pdf_pages_in_whole_pixels(stack):
    status, headers, answer = http(stack, "POST", "/vision/v2.0/read/core/asyncBatchAnalyze", born_digital(PAGES[:1]),
                                   {"Content-Type": "application/octet-stream"})
    assert status == 202, answer
    body = poll_operation(stack, headers["operation-location"], pending=("NotStarted", "Running"))
    assert body["status"] == "Succeeded", body
    (page,) = body["recognitionResults"]
    assert (page["unit"], page["width"], page["height"]) == ("pixel", 2550, 3300)
    assert all(isinstance(v, int) for v in page["lines"][0]["boundingBox"])


def test_bad_page_selections_get_azures_error(stack, png):
    for query in ("?pages=3-1", "?pages=0", "?pages=a", "?pages=1-99999999"):
        status, _, body = http(stack, "POST", "/vision/v3.2/read/analyze" + query, born_digital(PAGES), {"Content-Type": "application/pdf"})
        assert status == 400, (query, body)
        azure_error(body, "InvalidParameter")
    # A page past the end is the file's problem, found by the worker: the operation fails.
    assert read_result(stack, born_digital(PAGES), "?pages=4")["status"] == "failed"
    serves(stack, png)


def test_image_only_routes_refuse_a_pdf_as_their_services_do(stack, png):
    pdf = born_digital(PAGES[:1])
    status, _, body = http(stack, "POST", IMAGE_ANALYSIS, pdf, {"Content-Type": "application/octet-stream"})
    assert status == 400
    image_analysis_error(body, "InvalidRequest", "InvalidImageFormat")
    status, _, body = http(stack, "POST", "/v1/images:annotate", {"requests": [
        {"image": {"content": base64.b64encode(pdf).decode()}, "features": [{"type": "DOCUMENT_TEXT_DETECTION"}]}]})
    assert status == 200, body
    (response,) = body["responses"]
    assert response["error"]["code"] == 3 and "files:annotate" in response["error"]["message"]
    serves(stack, png)


def test_google_client_annotates_a_files_pages(stack):
    from google.cloud import vision
    client = vision_client(stack)
    six = PAGES + [[(72, 72, "Page %d" % n)] for n in range(4, 7)]
    feature = vision.Feature(type_=vision.Feature.Type.DOCUMENT_TEXT_DETECTION)
    request = vision.AnnotateFileRequest(input_config=vision.InputConfig(content=born_digital(six), mime_type="application/pdf"),
                                         features=[feature], pages=[2, -1])
    (file,) = client.batch_annotate_files(requests=[request]).responses
    assert file.total_pages == 6
    second, last = file.responses
    assert (second.context.page_number, last.context.page_number) == (2, 6)
    assert second.full_text_annotation.text == "Second page, two inches in\n"
    assert last.full_text_annotation.text == "Page 6\n"
    page = second.full_text_annotation.pages[0]
    assert (page.width, page.height) == (612, 792), "a PDF page in points"
    word = page.blocks[0].paragraphs[0].words[0]
    assert "".join(s.text for s in word.symbols) == "Second"
    xs = [v.x for v in word.bounding_box.normalized_vertices]
    assert abs(min(xs) - 2 / 8.5) < 0.005 and not word.bounding_box.vertices, word.bounding_box
    # No pages named: the first five.
    (file,) = client.batch_annotate_files(requests=[vision.AnnotateFileRequest(
        input_config=vision.InputConfig(content=born_digital(six), mime_type="application/pdf"), features=[feature])]).responses
    assert [r.context.page_number for r in file.responses] == [1, 2, 3, 4, 5]


def test_files_annotate_errors_in_googles_shape(stack, png):
    pdf = base64.b64encode(born_digital(PAGES)).decode()
    def call(file):
        return http(stack, "POST", "/v1/files:annotate", {"requests": [file]})
    feature = [{"type": "DOCUMENT_TEXT_DETECTION"}]
    for file, words in [
        ({"inputConfig": {"content": pdf, "mimeType": "application/pdf"}, "features": feature, "pages": [1, 2, 3, 4, 5, 6]}, "at most 5"),
        ({"inputConfig": {"content": pdf, "mimeType": "application/pdf"}, "features": feature, "pages": [0]}, "no page 0"),
        ({"inputConfig": {"content": pdf, "mimeType": "application/msword"}, "features": feature}, "not supported"),
        ({"inputConfig": {"gcsSource": {"uri": "gs://bucket/a.pdf"}, "mimeType": "application/pdf"}, "features": feature}, "gcsSource"),
        ({"inputConfig": {"content": "%%%", "mimeType": "application/pdf"}, "features": feature}, "Base64"),
        ({"inputConfig": {"content": pdf, "mimeType": "application/pdf"}, "features": [{"type": "LABEL_DETECTION"}]}, "text only"),
    ]:
        status, _, body = call(file)
        assert status == 400, (file, body)
        assert words in google_error(body, 400, "INVALID_ARGUMENT")
    # A file that is not one: that file's error, the call still 200; a page past the end too.
    status, _, body = call({"inputConfig": {"content": base64.b64encode(b"%PDF-1.7 nothing").decode(), "mimeType": "application/pdf"},
                            "features": feature})
    assert status == 200 and body["responses"][0]["error"]["code"] == 3, body
    status, _, body = call({"inputConfig": {"content": pdf, "mimeType": "application/pdf"}, "features": feature, "pages": [4]})
    assert status == 200 and "page 4" in body["responses"][0]["error"]["message"], body
    serves(stack, png)
