"""The outputs of `quire recognize` that other tools open: the foreign result shapes
(`--format cloud-vision|azure-read|azure-read-v2|image-analysis`), the searchable PDF
(`--format pdf`, `outputs: ["pdf"]`) and the overlay picture (`--overlay out.png`).

Each foreign shape is decoded by the official client library's own models (google-cloud-vision's
proto-plus types with unknown fields rejected, the Azure SDKs' deserializers) and checked against
what was drawn: the words, and where they are in the uploaded image's pixels, for an upright page,
a photo stored sideways with EXIF orientation 6, and a page scanned crooked. The PDF is read back
with poppler (pdftotext, pdfinfo); the overlay is looked at pixel by pixel.

Real processes: `quire broker` + `quire worker ocr` (once for the module) and the `quire` CLI.
Needs: PyPI google-cloud-vision, azure-cognitiveservices-vision-computervision,
azure-ai-vision-imageanalysis, pillow; Debian poppler-utils (scripts/install-deps).
"""

import io
import json
import re
import subprocess
from datetime import datetime

import pytest
from PIL import Image, ImageFilter, ImageOps

import ocr_images as oi
from test_ocr import RESULT_SCHEMA, SERVICE, quire_bin, start_stack, validate_result, zctx  # noqa: F401 (fixtures)

TOLERANCE = 8  # pixels between a drawn word's box and the box read


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("formats-stack")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(log_dir / "data")],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    yield st
    for p in reversed(st.processes):
        p.stop()


LINES = ["Quire reads receipts", "and invoices too"]


@pytest.fixture(scope="module")
def page():
    return oi.render_lines(LINES, size=40)


@pytest.fixture(scope="module")
def files(page, tmp_path_factory):
    d = tmp_path_factory.mktemp("formats-images")
    upright = d / "page.png"
    page.image.save(upright)
    sideways = d / "sideways.jpg"
    sideways.write_bytes(oi.exif_jpeg(page.image.convert("RGB"), 6))
    crooked = d / "crooked.png"
    oi.skewed(page.image, 4).save(crooked)
    return {"upright": upright, "sideways": sideways, "crooked": crooked}


def recognize(quire_bin, stack, path, *args, binary=False):
    p = subprocess.run([quire_bin, "recognize", str(path), "--broker", stack.url, *map(str, args)],
                       capture_output=True, timeout=90)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout if binary else json.loads(p.stdout)


def near(a, b, tolerance=TOLERANCE):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def corners(box):
    x0, y0, x1, y1 = box
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def flat(points):
    return [v for p in points for v in p]


# ---------------------------------------------------------------------------
# Cloud Vision
# ---------------------------------------------------------------------------

def test_cloud_vision_is_an_annotate_image_response(quire_bin, stack, files, page):
    from google.cloud import vision
    raw = recognize(quire_bin, stack, files["upright"], "--format", "cloud-vision")
    # Google's own types, unknown fields rejected: every name is the proto3 JSON mapping's.
    r = vision.AnnotateImageResponse.from_json(json.dumps(raw), ignore_unknown_fields=False)
    assert r.text_annotations[0].description == "\n".join(LINES) + "\n"
    assert r.text_annotations[0].locale == "en"
    assert [a.description for a in r.text_annotations[1:]] == [w.text for w in page.words]
    for annotation, word in zip(r.text_annotations[1:], page.words):
        got = flat((v.x, v.y) for v in annotation.bounding_poly.vertices)
        assert near(got, flat(corners(word.box))), (word.text, got, word.box)
    full = r.full_text_annotation
    assert full.text == r.text_annotations[0].description
    (p,) = full.pages
    assert (p.width, p.height) == page.image.size
    words = [w for b in p.blocks for para in b.paragraphs for w in para.words]
    assert ["".join(s.text for s in w.symbols) for w in words] == [w.text for w in page.words]
    Break = vision.TextAnnotation.DetectedBreak.BreakType
    assert [w.symbols[-1].property.detected_break.type_ for w in words] == [
        Break.SPACE, Break.SPACE, Break.EOL_SURE_SPACE, Break.SPACE, Break.SPACE, Break.LINE_BREAK]
    # DOCUMENT_TEXT_DETECTION (the default document mode) has confidences at every level.
    assert 0.5 < p.confidence <= 1 and all(0.5 < w.confidence <= 1 for w in words)
    assert all(b.block_type == vision.Block.BlockType.TEXT for b in p.blocks)


def test_cloud_vision_text_detection_has_no_confidences(quire_bin, stack, files):
    from google.cloud import vision
    raw = recognize(quire_bin, stack, files["upright"], "--format", "cloud-vision", "--mode", "text")
    vision.AnnotateImageResponse.from_json(json.dumps(raw), ignore_unknown_fields=False)
    # No reading confidence at any level; the languages found keep theirs, as Google's answers do.
    def confidences(node):
        if isinstance(node, dict):
            return [k for k, v in node.items() if k == "confidence"] + [c for k, v in node.items() if k != "detectedLanguages" for c in confidences(v)]
        if isinstance(node, list):
            return [c for v in node for c in confidences(v)]
        return []
    assert confidences(raw["fullTextAnnotation"]) == []
    detected = raw["fullTextAnnotation"]["pages"][0]["property"]["detectedLanguages"]
    assert detected[0]["languageCode"] == "en" and 0 < detected[0]["confidence"] <= 1, detected
    assert raw["textAnnotations"][0]["description"].split() == " ".join(LINES).split()


def test_cloud_vision_leaves_out_zeros_as_proto3_json_does(quire_bin, stack, tmp_path):
    # A word whose ink starts at the image's left edge: its vertices at x = 0 carry only y.
    d = oi.render_lines(["Edge words"], size=40)
    left = ImageOps.invert(d.image.convert("L")).getbbox()[0]
    f = tmp_path / "edge.png"
    d.image.crop((left + 2, 0, d.image.width, d.image.height)).save(f)  # into the solid stem of the E
    raw = recognize(quire_bin, stack, f, "--format", "cloud-vision")
    assert raw["textAnnotations"][1]["description"] == "Edge"
    vertices = raw["textAnnotations"][1]["boundingPoly"]["vertices"]
    assert "x" not in vertices[0] and "x" not in vertices[3] and vertices[1]["x"] > 0, vertices


def test_cloud_vision_answers_an_image_without_text_with_an_empty_response(quire_bin, stack, tmp_path):
    f = tmp_path / "blank.png"
    Image.new("L", (300, 200), 255).save(f)
    assert recognize(quire_bin, stack, f, "--format", "cloud-vision") == {}


# ---------------------------------------------------------------------------
# Azure Read 2.0 (the iOS tutorial), 3.2, Image Analysis 4.0
# ---------------------------------------------------------------------------

def check_tutorial_types(body):
    """What the tutorial's Codable structs accept: [Int] boxes, String? confidence."""
    assert body["status"] == "Succeeded"
    for result in body["recognitionResults"]:
        assert isinstance(result["clockwiseOrientation"], (int, float)) and 0 <= result["clockwiseOrientation"] < 360
        assert result["unit"] == "pixel"
        for line in result["lines"]:
            assert isinstance(line["text"], str)
            for item in [line] + line["words"]:
                box = item["boundingBox"]
                assert len(box) == 8 and all(type(v) is int for v in box), box
            for word in line["words"]:
                assert set(word) <= {"boundingBox", "text", "confidence"}, word
                assert word.get("confidence", "Low") == "Low", word


def test_azure_read_v2_decodes_as_the_tutorial_does(quire_bin, stack, files, page):
    body = recognize(quire_bin, stack, files["upright"], "--format", "azure-read-v2")
    check_tutorial_types(body)
    (r,) = body["recognitionResults"]
    assert (r["page"], r["width"], r["height"], r["clockwiseOrientation"]) == (1, *page.image.size, 0)
    assert [line["text"] for line in r["lines"]] == LINES
    words = [w for line in r["lines"] for w in line["words"]]
    for got, drawn in zip(words, page.words):
        assert got["text"] == drawn.text and near(got["boundingBox"], flat(corners(drawn.box))), (got, drawn)


def smeared_page(tmp_path):
    """Three lines, the middle one smeared past reading (blurred more than the ink step can undo), on
    a scan's tones (ink 30, paper 245, so that the step darkens the smear into something to read):
    its word comes back with a low confidence, the others high."""
    d = oi.render_lines(["Clear words then", "gibberish", "end"], size=40)
    img = d.image.copy()
    box = (0, int(img.height * 0.38), img.width, int(img.height * 0.62))
    img.paste(img.crop(box).filter(ImageFilter.GaussianBlur(4.5)), box)
    img = img.point(lambda v: 30 + v * 215 // 255)
    f = tmp_path / "smeared.png"
    img.save(f)
    return f


def test_azure_read_v2_says_low_exactly_for_low_confidence_words(quire_bin, stack, tmp_path):
    # One line smeared past reading: its word comes back with a low confidence, the others high.
    f = smeared_page(tmp_path)
    result = validate_result(recognize(quire_bin, stack, f))
    confidences = [w["confidence"] for b in result["pages"][0]["blocks"] for p in b["paragraphs"] for ln in p["lines"] for w in ln["words"]]
    assert any(c < 0.6 for c in confidences) and any(c >= 0.6 for c in confidences), confidences
    body = recognize(quire_bin, stack, f, "--format", "azure-read-v2")
    check_tutorial_types(body)
    marks = [w.get("confidence") for ln in body["recognitionResults"][0]["lines"] for w in ln["words"]]
    assert marks == ["Low" if c < 0.6 else None for c in confidences]


def test_azure_read_32_decodes_with_the_sdk_models(quire_bin, stack, files, page):
    from azure.cognitiveservices.vision.computervision import models
    from msrest import Deserializer
    body = recognize(quire_bin, stack, files["upright"], "--format", "azure-read")
    op = Deserializer({k: v for k, v in vars(models).items() if isinstance(v, type)})("ReadOperationResult", body)
    assert op.status == models.OperationStatusCodes.succeeded
    for stamp in (body["createdDateTime"], body["lastUpdatedDateTime"]):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert op.analyze_result.version == "v3.2" and op.analyze_result.model_version
    (r,) = op.analyze_result.read_results
    assert (r.page, r.width, r.height, r.unit, r.angle, r.language) == (1, *page.image.size, "pixel", 0, "en")
    assert [ln.text for ln in r.lines] == LINES
    assert all(ln.appearance.style.name == "other" and 0 <= ln.appearance.style.confidence <= 1 for ln in r.lines)
    words = [w for ln in r.lines for w in ln.words]
    assert all(0.5 < w.confidence <= 1 for w in words)
    for got, drawn in zip(words, page.words):
        assert got.text == drawn.text and near(got.bounding_box, flat(corners(drawn.box)))
    # Nothing the SDK does not know.
    assert not r.additional_properties and not any(ln.additional_properties for ln in r.lines)


def test_image_analysis_decodes_with_the_sdk_model(quire_bin, stack, files, page):
    from azure.ai.vision.imageanalysis.models import ImageAnalysisResult
    body = recognize(quire_bin, stack, files["upright"], "--format", "image-analysis")
    r = ImageAnalysisResult(body)
    assert r.model_version == "2023-10-01"
    assert (r.metadata.width, r.metadata.height) == page.image.size
    lines = [ln for b in r.read.blocks for ln in b.lines]
    assert [ln.text for ln in lines] == LINES
    words = [w for ln in lines for w in ln.words]
    for got, drawn in zip(words, page.words):
        assert got.text == drawn.text and 0.5 < got.confidence <= 1
        assert near(flat((p.x, p.y) for p in got.bounding_polygon), flat(corners(drawn.box)))


# ---------------------------------------------------------------------------
# Where words are: a photo stored sideways, a crooked scan
# ---------------------------------------------------------------------------

def test_sideways_photo_coordinates_are_the_stored_pixels(quire_bin, stack, files, page):
    """EXIF orientation 6: the file's pixels are the page turned a quarter counter-clockwise. Boxes
    come in the stored pixels, each quad starting at its word's top-left, and the angle says how
    the text is turned."""
    w, h = page.image.size
    to_stored = oi.upright_to_stored(6, w, h)
    v2 = recognize(quire_bin, stack, files["sideways"], "--format", "azure-read-v2")
    check_tutorial_types(v2)
    (r,) = v2["recognitionResults"]
    assert (r["width"], r["height"], r["clockwiseOrientation"]) == (h, w, 270)
    words = [x for line in r["lines"] for x in line["words"]]
    assert [x["text"] for x in words] == [d.text for d in page.words]
    for got, drawn in zip(words, page.words):
        want = flat(to_stored(x, y) for x, y in corners(drawn.box))
        assert near(got["boundingBox"], want), (drawn.text, got["boundingBox"], want)
    v3 = recognize(quire_bin, stack, files["sideways"], "--format", "azure-read")
    assert v3["analyzeResult"]["readResults"][0]["angle"] == -90
    cv = recognize(quire_bin, stack, files["sideways"], "--format", "cloud-vision")
    p = cv["fullTextAnnotation"]["pages"][0]
    assert (p["width"], p["height"]) == (h, w)
    ia = recognize(quire_bin, stack, files["sideways"], "--format", "image-analysis")
    assert ia["metadata"] == {"width": h, "height": w}


def test_crooked_scan_quads_lean_with_the_text(quire_bin, stack, files):
    """A page turned 4° counter-clockwise: Quire deskews it to read; the quads lean with the text
    in the uploaded image and the angle is the lean (clockwise positive, so about −4°)."""
    body = recognize(quire_bin, stack, files["crooked"], "--format", "azure-read")
    (r,) = body["analyzeResult"]["readResults"]
    assert [ln["text"] for ln in r["lines"]] == LINES
    assert -5 <= r["angle"] <= -3, r["angle"]
    for line in r["lines"]:
        x1, y1, x2, y2, x3, y3, x4, y4 = line["boundingBox"]
        rise = (y1 - y2) / (x2 - x1)
        assert 0.04 < rise < 0.1, line  # tan 4° ≈ 0.07
        assert 0.04 < (y4 - y3) / (x3 - x4) < 0.1, line
    v2 = recognize(quire_bin, stack, files["crooked"], "--format", "azure-read-v2")
    assert 355 <= v2["recognitionResults"][0]["clockwiseOrientation"] <= 357


# ---------------------------------------------------------------------------
# The searchable PDF
# ---------------------------------------------------------------------------

def pdftotext(path, *args):
    return subprocess.run(["pdftotext", *args, str(path), "-"], capture_output=True, check=True, timeout=30).stdout.decode()


def pdfinfo(path):
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, check=True, timeout=30)
    assert not out.stderr, out.stderr
    return out.stdout.decode()


@pytest.mark.parametrize("name", ["upright", "sideways", "crooked"])
def test_pdf_text_can_be_selected_where_the_words_are(quire_bin, stack, files, page, tmp_path, name):
    pdf = tmp_path / (name + ".pdf")
    pdf.write_bytes(recognize(quire_bin, stack, files[name], "--format", "pdf", binary=True))
    assert pdf.read_bytes().startswith(b"%PDF-")
    info = pdfinfo(pdf)
    assert "Pages:           1" in info
    size = Image.open(files[name]).size if name == "crooked" else page.image.size
    # No resolution in the file: one pixel, one point; upright as a viewer shows the photo.
    assert re.search(r"Page size:\s+%d x %d pts" % size, info), info
    assert pdftotext(pdf).split("\n")[:2] == LINES
    if name == "upright":
        words = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', pdftotext(pdf, "-bbox"))
        assert [w[4] for w in words] == [d.text for d in page.words]
        for got, drawn in zip(words, page.words):
            x0, _, x1, _ = map(float, got[:4])
            assert abs(x0 - drawn.box[0]) <= TOLERANCE and abs(x1 - drawn.box[2]) <= TOLERANCE, (got, drawn)


def _coloured(img):
    out = img.convert("RGB")
    out.paste((250, 235, 200), (0, 0, out.width, 12))  # a coloured band: the page keeps its colour
    return out


PIXEL_KINDS = {
    "grey-png": lambda img: oi.png(img.convert("L")),
    "rgba-png": lambda img: oi.png(img.convert("RGBA")),
    "palette-png": lambda img: oi.png(_coloured(img).convert("P", palette=Image.ADAPTIVE, colors=16)),
    "bilevel-tiff-g4": lambda img: oi.encode(img.convert("1"), "TIFF", compression="group4"),
    "rgb-jpeg": lambda img: oi.jpeg(_coloured(img)),
    "webp": lambda img: oi.encode(_coloured(img), "WEBP", quality=90),
    "gif": lambda img: oi.encode(img.convert("P"), "GIF"),
    "bmp": lambda img: oi.encode(img.convert("RGB"), "BMP"),
    "heic": lambda img: oi.heic(_coloured(img)),
}


@pytest.mark.parametrize("kind", sorted(PIXEL_KINDS))
def test_pdf_shows_the_image_whatever_its_pixels(quire_bin, stack, page, tmp_path, kind):
    """Every format and pixel kind becomes a page poppler renders: the text is selectable and the
    picture is there (ink dark under the first word, paper light beside it)."""
    f = tmp_path / ("page." + kind)
    f.write_bytes(PIXEL_KINDS[kind](page.image))
    pdf = tmp_path / (kind + ".pdf")
    pdf.write_bytes(recognize(quire_bin, stack, f, "--format", "pdf", binary=True))
    pdfinfo(pdf)
    assert pdftotext(pdf).split("\n")[:2] == LINES
    # At the image's own size (a BMP declares 96 dpi: its page is smaller in points).
    w, h = page.image.size
    subprocess.run(["pdftoppm", "-scale-to-x", str(w), "-scale-to-y", str(h), "-gray", "-png", str(pdf), str(tmp_path / kind)],
                   check=True, timeout=30)
    (rendered,) = tmp_path.glob(kind + "*.png")
    shown = Image.open(rendered).convert("L")
    assert shown.size == page.image.size
    x0, y0, x1, y1 = page.words[0].box
    ink = min(shown.getpixel((x, y)) for x in range(x0, x1) for y in range(y0, y1))
    assert ink < 80, (kind, ink)
    assert shown.getpixel((x0 // 2, (y0 + y1) // 2)) > 200


def test_pdf_travels_as_a_frame_after_the_result(stack, files):
    frames = stack.call(SERVICE, [json.dumps({"outputs": ["pdf"]}).encode(), files["upright"].read_bytes()])
    assert len(frames) == 2
    result = validate_result(json.loads(frames[0]))
    assert result["attachments"] == [{"output": "pdf", "frame": 2, "mediaType": "application/pdf", "size": len(frames[1])}]
    assert frames[1].startswith(b"%PDF-") and frames[1].rstrip().endswith(b"%%EOF")
    assert "pdf" not in json.dumps(result["pages"][0].get("renderings", {}))
    # Without pdf: one frame, no attachments.
    (only,) = stack.call(SERVICE, [b"{}", files["upright"].read_bytes()])
    assert "attachments" not in json.loads(only)


def test_pdf_of_a_durable_job(quire_bin, stack, files, tmp_path):
    """Submitted with --format pdf, the job keeps both frames; `quire result --format pdf` writes the
    PDF, and the same job converts to the other shapes too."""
    def run(*args):
        p = subprocess.run([quire_bin, *map(str, args), "--broker", stack.url], capture_output=True, timeout=90)
        assert p.returncode == 0, p.stderr.decode()
        return p.stdout
    job = run("submit", files["upright"], "--format", "pdf").decode().strip()
    pdf = tmp_path / "job.pdf"
    pdf.write_bytes(run("result", job, "--wait", "--format", "pdf"))
    assert pdftotext(pdf).split("\n")[:2] == LINES
    check_tutorial_types(json.loads(run("result", job, "--format", "azure-read-v2")))


def test_pdf_of_every_page_of_a_tiff(quire_bin, stack, tmp_path):
    first = oi.render_lines(["First page here"], size=40)
    second = oi.render_lines(["Second page there"], size=40)
    f = tmp_path / "two.tiff"
    f.write_bytes(oi.tiff_pages([first.image, second.image]))
    pdf = tmp_path / "two.pdf"
    pdf.write_bytes(recognize(quire_bin, stack, f, "--format", "pdf", binary=True))
    assert "Pages:           2" in pdfinfo(pdf)
    assert pdftotext(pdf, "-f", "1", "-l", "1").strip() == "First page here"
    assert pdftotext(pdf, "-f", "2", "-l", "2").strip() == "Second page there"


def test_pdf_wants_one_file_and_a_redirect(quire_bin, stack, files):
    p = subprocess.run([quire_bin, "recognize", str(files["upright"]), str(files["crooked"]), "--format", "pdf", "--broker", stack.url],
                       capture_output=True, timeout=30)
    assert p.returncode == 2 and b"--format pdf takes one image file" in p.stderr


# ---------------------------------------------------------------------------
# The overlay picture
# ---------------------------------------------------------------------------

WORD_GREEN, LOW_RED, LINE_BLUE = (0, 160, 60), (230, 20, 20), (30, 90, 255)


def words_of(result):
    return [w for b in result["pages"][0]["blocks"] for p in b["paragraphs"] for ln in p["lines"] for w in ln["words"]]


def edge_colours(img, word):
    """The colours on the middle of the word's left edge, a pixel either side too (a leaning edge
    is drawn a pixel off where rounding puts it)."""
    (x0, y0), _, _, (x3, y3) = [(p["x"], p["y"]) for p in word["polygon"]]
    x, y = (x0 + x3) // 2, (y0 + y3) // 2
    return {img.getpixel((x + dx, y)) for dx in (-1, 0, 1) if 0 <= x + dx < img.width}


@pytest.mark.parametrize("name", ["upright", "sideways", "crooked"])
def test_overlay_draws_the_boxes_on_the_upright_page(quire_bin, stack, files, page, tmp_path, name):
    out = tmp_path / (name + "-overlay.png")
    result = validate_result(recognize(quire_bin, stack, files[name], "--overlay", out))
    img = Image.open(out).convert("RGB")
    assert img.size == (result["pages"][0]["width"], result["pages"][0]["height"])
    if name != "crooked":
        assert img.size == page.image.size  # the sideways photo comes out upright
    words = words_of(result)
    for word in words[1:3] + words[4:]:  # not a line's first word: its left edge is not the line's
        assert LOW_RED not in edge_colours(img, word)
        assert WORD_GREEN in edge_colours(img, word), word["text"]
    line = result["pages"][0]["blocks"][0]["paragraphs"][0]["lines"][0]
    (x0, y0), (x1, y1) = [(p["x"], p["y"]) for p in line["polygon"][:2]]
    # The line's top edge, halfway along (a leaning edge for the crooked page).
    assert LINE_BLUE in [img.getpixel(((x0 + x1) // 2, (y0 + y1) // 2 + dy)) for dy in (-1, 0, 1)]


def test_overlay_marks_low_confidence_words_in_red(quire_bin, stack, tmp_path):
    f = smeared_page(tmp_path)
    out = tmp_path / "smeared-overlay.png"
    result = recognize(quire_bin, stack, f, "--overlay", out)
    overlay = Image.open(out).convert("RGB")
    words = words_of(result)
    low = [w for w in words if w["confidence"] < 0.6]
    assert low
    for w in low:
        # Alone on its line: its left edge is the line's, drawn first; the word's red is on top.
        assert LOW_RED in edge_colours(overlay, w), w
    assert WORD_GREEN in edge_colours(overlay, words[1])
