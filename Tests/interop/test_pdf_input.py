"""PDF uploads: scanned pages read by OCR, born-digital pages from their own text layer, hostile files.

Real processes: `quire broker` + `quire worker ocr --threads 2` (once for the module) and the `quire`
CLI. PDFs are made here: born-digital ones with fpdf2 (DejaVu Sans, real text), scanned ones with
Pillow (each page a picture), encrypted ones with qpdf, damaged ones by hand. Every result is
validated against proto-json/ocr-result.schema.json and every error against error.schema.json.

Needs: PDFium (scripts/install-pdfium), Debian qpdf and fonts-dejavu-core, PyPI fpdf2 and pillow.
"""

import io
import json
import re
import subprocess
import time
import zlib

import pytest
from fpdf import FPDF

import ocr_images as oi
from test_ocr import (GOOD, GOOD_PNG, _env, assert_words, ocr, ocr_error, page_lines, page_words,  # noqa: F401
                      quire_bin, request_frame, start_stack, validate_result, zctx)

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
POINTS_PER_INCH = 72


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("pdf-stack")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "2"],
    ])
    yield st
    for p in reversed(st.processes):
        p.stop()


def born_digital(pages, size=(612, 792)):
    """A PDF of real text: `pages` is a list of pages, each a list of (x, baseline y, text) in points
    from the top left, drawn in DejaVu Sans 11 pt."""
    pdf = FPDF(unit="pt", format=size)
    pdf.add_font("dejavu", fname=DEJAVU)
    pdf.set_font("dejavu", size=11)
    for page in pages:
        pdf.add_page()
        for x, y, text in page:
            pdf.text(x, y, text)
    return bytes(pdf.output())


def scanned(drawings, dpi=150):
    """A PDF whose pages are only pictures, each placed at `dpi` (what a scanner's "scan to PDF" makes)."""
    images = [d.image.convert("L") for d in drawings]
    out = io.BytesIO()
    images[0].save(out, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return out.getvalue()


def steps(doc, name, page):
    return [s for s in doc["metadata"]["steps"] if s["step"] == name and s["page"] == page]


def assert_still_serves(stack):
    assert_words(ocr(stack, {}, GOOD_PNG)["pages"][0], GOOD.words)


# A head across the page over two columns: each column's lines must come before the next column's.
HEAD = "Quarterly report of the harbour board"
LEFT = ["The left column begins", "with ships that came in", "during the spring months."]
RIGHT = ["The right column follows", "with the cargo they took", "out again in the summer."]


def report_pages():
    first = [(72, 80, HEAD)]
    first += [(72, 130 + 16 * i, line) for i, line in enumerate(LEFT)]
    first += [(330, 130 + 16 * i, line) for i, line in enumerate(RIGHT)]
    return [first, [(72, 100, "Second page, one line only.")]]


def recognize(quire_bin, stack, path, *args):
    p = subprocess.run([quire_bin, "recognize", str(path), "--broker", stack.url, *map(str, args)],
                       capture_output=True, timeout=120, env=_env())
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode("utf-8")


def test_born_digital_pages_are_read_from_their_text_layer(stack):
    doc = ocr(stack, {}, born_digital(report_pages()))
    meta = doc["metadata"]
    assert meta["format"] == "pdf" and meta["pageCount"] == 2
    assert meta["engine"].startswith("pdfium "), "no page needed OCR: %s" % meta["engine"]
    first, second = doc["pages"]
    assert [ln["text"] for ln in page_lines(first)] == [HEAD] + LEFT + RIGHT
    assert [ln["text"] for ln in page_lines(second)] == ["Second page, one line only."]
    for page in doc["pages"]:
        assert page["resolution"] == 300 and (page["width"], page["height"]) == (2550, 3300)
        (step,) = steps(doc, "textLayer", page["pageNumber"])
        assert step["applied"] and step["parameters"]["visibleCharacters"] > 0
        assert all(w["confidence"] == 1 for w in page_words(page))
    # Where the words stand: "Quarterly" starts 72 pt (300 px at 300 dpi) from the left, on a
    # baseline 80 pt (333 px) from the top; 11 pt letters stand about 30-45 px above it.
    word = page_words(first)[0]
    assert word["text"] == "Quarterly"
    box = word["boundingBox"]
    assert abs(box["x"] - 300) <= 4, box
    assert 280 <= box["y"] <= 300 and 330 <= box["y"] + box["height"] <= 350, box
    column = page_lines(first)[1 + len(LEFT)]
    assert column["text"] == RIGHT[0] and abs(column["boundingBox"]["x"] - 330 * 300 // 72) <= 4, column
    assert doc["text"] == first["text"] + "\f" + second["text"]


def test_text_layer_ignored_on_request_reads_by_ocr(stack):
    doc = ocr(stack, {"textLayer": "ignore", "pages": [1]}, born_digital(report_pages()))
    assert doc["metadata"]["engine"].startswith("tesseract ")
    (page,) = doc["pages"]
    (step,) = steps(doc, "textLayer", 1)
    assert not step["applied"] and step["parameters"]["renderDPI"] == 300
    assert page["resolution"] == 300 and (page["width"], page["height"]) == (2550, 3300)
    # Three-line columns are a table's rows to Tesseract's layout analysis (the CLI reads them across
    # too): the words are compared, not their order.
    words = [w["text"] for w in page_words(page)]
    assert sorted(words) == sorted(" ".join([HEAD] + LEFT + RIGHT).split()), words


def test_scanned_pages_are_read_at_their_own_resolution(stack):
    drawings = [oi.render_lines(["Scanned page one", "reads like its image"], "sans", 40),
                oi.render_lines(["Scanned page two", "in the same file"], "serif", 40)]
    doc = ocr(stack, {}, scanned(drawings, dpi=150))
    assert doc["metadata"]["format"] == "pdf" and doc["metadata"]["engine"].startswith("tesseract ")
    for page, drawn in zip(doc["pages"], drawings):
        (step,) = steps(doc, "textLayer", page["pageNumber"])
        assert not step["applied"] and step["parameters"]["visibleCharacters"] == 0
        assert step["parameters"]["imageCover"] > 0.99 and step["parameters"]["renderDPI"] == 150
        # Rendered at the picture's own resolution, the page's pixels are the picture's.
        assert page["resolution"] == 150
        assert abs(page["width"] - drawn.image.width) <= 1 and abs(page["height"] - drawn.image.height) <= 1
        assert [ln["text"] for ln in page_lines(page)] == drawn.lines
        assert_words(page, drawn.words)


def test_a_document_of_both_kinds_reads_each_page_its_way(stack, tmp_path):
    drawn = oi.render_lines(["A scanned letter", "between typed pages"], "sans", 40)
    qpdf_merge = tmp_path / "both.pdf"
    typed, picture = tmp_path / "typed.pdf", tmp_path / "picture.pdf"
    typed.write_bytes(born_digital(report_pages()))
    picture.write_bytes(scanned([drawn]))
    subprocess.run(["qpdf", "--empty", "--pages", typed, "1", picture, typed, "2", "--", qpdf_merge], check=True)
    doc = ocr(stack, {}, qpdf_merge.read_bytes())
    assert [s["applied"] for s in doc["metadata"]["steps"] if s["step"] == "textLayer"] == [True, False, True]
    assert [ln["text"] for ln in page_lines(doc["pages"][1])] == drawn.lines
    assert [ln["text"] for ln in page_lines(doc["pages"][2])] == ["Second page, one line only."]


def test_cli_reads_a_pdf_with_pages_apart_by_form_feeds(quire_bin, stack, tmp_path):
    f = tmp_path / "report.pdf"
    f.write_bytes(born_digital(report_pages() + [[(72, 100, "Third page.")]]))
    text = recognize(quire_bin, stack, f, "--format", "text")
    pages = text.split("\f")
    assert len(pages) == 3, text
    assert pages[0].split() == " ".join([HEAD] + LEFT + RIGHT).split()
    assert pages[1].strip() == "Second page, one line only." and pages[2].strip() == "Third page."
    # Azure's way of naming pages: ranges and single pages.
    assert recognize(quire_bin, stack, f, "--format", "text", "--pages", "2-3").split("\f") == pages[1:]
    assert recognize(quire_bin, stack, f, "--format", "text", "--pages", "3,1").split("\f") == [pages[2], pages[0]]
    # What a PDF does not have: pixels to draw an overlay on.
    p = subprocess.run([quire_bin, "recognize", str(f), "--broker", stack.url, "--overlay", str(tmp_path / "o.png")],
                       capture_output=True, timeout=60, env=_env())
    assert p.returncode == 1 and "no overlay: it is drawn on an image's pixels" in p.stderr.decode(), p.stderr.decode()
    # Its searchable PDF is itself: every page has its own text, read from it.
    p = subprocess.run([quire_bin, "recognize", str(f), "--broker", stack.url, "--format", "pdf"], capture_output=True, timeout=60, env=_env())
    assert p.returncode == 0 and p.stdout == f.read_bytes(), p.stderr.decode()


# ---------------------------------------------------------------------------
# Hostile and damaged files: a typed error in bounded time, and the worker keeps serving
# ---------------------------------------------------------------------------

def encrypted(tmp_path, user):
    plain, locked = tmp_path / "plain.pdf", tmp_path / "locked.pdf"
    plain.write_bytes(born_digital(report_pages()))
    subprocess.run(["qpdf", "--encrypt", user, "owner-secret", "256", "--", plain, locked], check=True)
    return locked.read_bytes()


def broken_xref():
    """Every offset of the cross-reference table points nine bytes late: readers must rebuild it."""
    data = born_digital(report_pages())
    start = data.rindex(b"\nxref\n")
    table = re.sub(rb"\n(\d{10}) 00000 n", lambda m: b"\n%010d 00000 n" % (int(m.group(1)) + 9), data[start:])
    assert table != data[start:]
    return data[:start] + table


def raw_pdf(objects):
    """A PDF of these objects (object 1 the catalog), each at the offset its cross-reference table gives."""
    out, offsets = b"%PDF-1.7\n", []
    for i, body in enumerate(objects):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i + 1, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def stream(dictionary, data):
    return b"<< %s /Length %d >>\nstream\n" % (dictionary, len(data)) + data + b"\nendstream"


CATALOG, ONE_PAGE = b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def page_drawing(content, resources=b"", filter=b""):
    return [CATALOG, ONE_PAGE,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << %s >> /Contents 4 0 R >>" % resources,
            stream(filter, content)]


def zero_pages():
    return raw_pdf([CATALOG, b"<< /Type /Pages /Kids [] /Count 0 >>"])


def form_drawing_itself():
    return raw_pdf(page_drawing(b"/Fm0 Do", b"/XObject << /Fm0 5 0 R >>") + [
        stream(b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /Fm0 5 0 R >> >>", b"/Fm0 Do")])


def image_claiming_billions_of_pixels():
    return raw_pdf(page_drawing(b"q 612 0 0 792 0 0 cm /Im0 Do Q", b"/XObject << /Im0 5 0 R >>") + [
        stream(b"/Type /XObject /Subtype /Image /Width 60000 /Height 60000 /ColorSpace /DeviceRGB /BitsPerComponent 8", b"0123456789")])


def page_tree_loop():
    return raw_pdf([CATALOG, b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"])


def content_bomb():
    # 200 MB of spaces in 200 KB of Flate: a content stream that inflates a thousandfold.
    return raw_pdf(page_drawing(zlib.compress(b" " * (200 << 20), 9), filter=b"/Filter /FlateDecode"))


def huge_page():
    # 200 inches wide: 60,000 pixels across at 300 dpi, far past the worker's 60-million-pixel limit.
    return born_digital([[(72, 100, "A banner nobody can render")]], size=(200 * POINTS_PER_INCH, 792))


@pytest.mark.parametrize("name, make, options, code", [
    ("no body after the header", lambda t: b"%PDF-1.7\n", {}, "corrupt_image"),
    ("garbage after the header", lambda t: b"%PDF-1.4\n" + bytes(range(256)) * 40, {}, "corrupt_image"),
    ("needs a password", lambda t: encrypted(t, "user-secret"), {}, "password_protected"),
    ("no pages", lambda t: zero_pages(), {}, "corrupt_image"),
    # Its text layer reads without rendering; read by OCR, it must be rendered, and may not be.
    ("one page too large to render", lambda t: huge_page(), {"textLayer": "ignore"}, "too_many_pixels"),
])
def test_hostile_pdfs_get_typed_errors(stack, tmp_path, name, make, options, code):
    started = time.monotonic()
    err = ocr_error(stack, [request_frame(options), make(tmp_path)], code)
    assert time.monotonic() - started < 10, name
    assert err["message"], name
    if code == "too_many_pixels":
        assert err["limit"] == 60_000_000 and "200" in err["message"]
    assert_still_serves(stack)


@pytest.mark.parametrize("make", [form_drawing_itself, image_claiming_billions_of_pixels, page_tree_loop, content_bomb])
@pytest.mark.parametrize("text_layer", ["auto", "ignore"])
def test_pathological_pdfs_end_in_bounded_time_and_the_worker_serves(stack, make, text_layer):
    """Files built to make a reader loop, allocate or inflate without end: PDFium stops each (a
    recursion limit, a refused image, a page tree walked once, a stream inflated and found empty), and
    the page comes back empty or as a typed error, in seconds."""
    started = time.monotonic()
    body = stack.call(b"ocr", [request_frame({"textLayer": text_layer}), make()], timeout=60)
    assert time.monotonic() - started < 15, make.__name__
    reply = body[0].decode()
    if '"error"' in reply and '"pages"' not in reply:
        assert '"corrupt_image"' in reply or '"too_many_pixels"' in reply, reply[:300]
    else:
        assert all(not p["text"].strip() for p in validate_result(json.loads(reply))["pages"]), reply[:300]
    assert_still_serves(stack)


def test_damaged_but_readable_pdfs_are_read(stack, tmp_path):
    expected = " ".join([HEAD] + LEFT + RIGHT).split()
    # Only an owner password (permissions): anyone may open it, and so does Quire. A page larger than
    # any rendering budget reads from its text layer, which needs no pixels.
    huge = ocr(stack, {}, huge_page())["pages"][0]
    assert huge["text"] == "A banner nobody can render\n" and huge["width"] == 200 * 300
    for data in (encrypted(tmp_path, ""), broken_xref()):
        doc = ocr(stack, {"pages": [1]}, data)
        assert [w["text"] for w in page_words(doc["pages"][0])] == expected


def test_a_page_that_cannot_be_rendered_is_reported_and_the_others_read(stack, tmp_path):
    good, huge, both = tmp_path / "good.pdf", tmp_path / "huge.pdf", tmp_path / "both.pdf"
    good.write_bytes(scanned([oi.render_lines(["The readable page"], "sans", 40)]))
    huge.write_bytes(huge_page())
    subprocess.run(["qpdf", "--empty", "--pages", good, huge, "--", both], check=True)
    doc = ocr(stack, {"textLayer": "ignore"}, both.read_bytes())
    first, second = doc["pages"]
    assert [ln["text"] for ln in page_lines(first)] == ["The readable page"] and "error" not in first
    assert second["error"]["code"] == "too_many_pixels" and second["text"] == "" and second["blocks"] == []
    assert second["error"]["message"].startswith("page 2: ")


def test_truncated_pdfs_are_read_or_refused_never_hang(stack):
    data = born_digital(report_pages())
    for cut in range(16, len(data), len(data) // 23):
        started = time.monotonic()
        body = stack.call(b"ocr", [b"{}", data[:cut]], timeout=30)
        assert time.monotonic() - started < 10, cut
        reply = body[0].decode()
        assert '"error"' not in reply or '"corrupt_image"' in reply, (cut, reply[:300])
    assert_still_serves(stack)


def test_a_selection_past_the_last_page_is_refused(stack):
    data = born_digital(report_pages())
    assert "page 3 requested; the PDF has 2" in ocr_error(stack, [request_frame({"pages": [3]}), data], "bad_request")["message"]
    assert_still_serves(stack)


# ---------------------------------------------------------------------------
# A searchable PDF of a PDF: the pages kept, the OCR text laid over them
# ---------------------------------------------------------------------------

def words_with_boxes(pdf_path):
    """pdftotext's words per page: [(text, xMin, yMin, xMax, yMax)] in points of the displayed page."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf_path), "-"], capture_output=True, check=True).stdout.decode()
    pages = []
    for page in re.findall(r"<page .*?</page>", out, re.S):
        pages.append([(m.group(5), *map(float, m.group(1, 2, 3, 4)))
                      for m in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', page)])
    return pages


def test_a_searchable_pdf_keeps_each_page_and_lays_the_text_where_it_stands(quire_bin, stack, tmp_path):
    """`--format pdf` on a PDF: scanned pages, one turned by /Rotate 90 and one by 180 (shown sideways
    and upside down), and a born-digital page. The result passes qpdf --check; pdftotext finds each
    scanned page's words in reading order, each where the picture shows it (within 3 points of where
    it was drawn, on the page as displayed); the born-digital page is read from its own text and
    gets no second layer; every page keeps its own content."""
    sentences = ["Searchable output keeps the page", "and lays the words over it", "where the reader sees them",
                 "on the screen in any viewer", "that finds and copies text"]
    drawing = oi.render_lines(sentences, "serif", 36)
    dpi = 150
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned([drawing, drawing, drawing], dpi=dpi))
    turned = tmp_path / "turned.pdf"
    subprocess.run(["qpdf", str(scan), "--rotate=+90:2", "--rotate=+180:3", str(turned)], check=True)
    text = tmp_path / "text.pdf"
    text.write_bytes(born_digital([[(72, 100, "A page with its own text")]]))
    both = tmp_path / "both.pdf"
    subprocess.run(["qpdf", "--empty", "--pages", str(turned), str(text), "--", str(both)], check=True)
    p = subprocess.run([quire_bin, "recognize", str(both), "--broker", stack.url, "--format", "pdf"],
                       capture_output=True, timeout=120, env=_env())
    assert p.returncode == 0, p.stderr.decode()
    out = tmp_path / "both.ocr.pdf"
    out.write_bytes(p.stdout)
    check = subprocess.run(["qpdf", "--check", str(out)], capture_output=True)
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()
    pages = words_with_boxes(out)
    assert len(pages) == 4
    width, height = drawing.image.size[0] * 72 / dpi, drawing.image.size[1] * 72 / dpi
    for number, turn in [(1, 0), (2, 90), (3, 180)]:
        found = pages[number - 1]
        assert [w[0] for w in found] == [w.text for w in drawing.words], "page %d: %s" % (number, found)
        for mine, drawn in zip(found, drawing.words):
            x0, y0, x1, y1 = (v * 72 / dpi for v in drawn.box)
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            # The drawn word's middle on the page as displayed (clockwise turns).
            expected = {0: (cx, cy), 90: (height - cy, cx), 180: (width - cx, height - cy)}[turn]
            middle = ((mine[1] + mine[3]) / 2, (mine[2] + mine[4]) / 2)
            assert abs(middle[0] - expected[0]) < 3 and abs(middle[1] - expected[1]) < 3, (number, mine, expected)
    assert [w[0] for w in pages[3]] == "A page with its own text".split(), "read from its own text, once"
    texts = subprocess.run(["pdftotext", str(out), "-"], capture_output=True).stdout.decode().split("\f")
    assert texts[0].split() == " ".join(sentences).split()
    # Each page's own content is still drawn: the pictures render as before.
    for number in (1, 4):
        a = subprocess.run(["pdftoppm", "-r", "30", "-f", str(number), "-l", str(number), "-gray", str(both)], capture_output=True).stdout
        b = subprocess.run(["pdftoppm", "-r", "30", "-f", str(number), "-l", str(number), "-gray", str(out)], capture_output=True).stdout
        assert a == b and len(a) > 1000, "page %d looks as it did" % number
    assert_still_serves(stack)


def test_a_searchable_pdf_of_a_born_digital_document_is_the_document(stack):
    """Pages read from their own text layer get no second one: the file comes back as it was sent."""
    data = born_digital(report_pages())
    frames = stack.call(b"ocr", [request_frame({"outputs": ["pdf"]}), data])
    doc = validate_result(json.loads(frames[0]))
    assert doc["attachments"] == [{"output": "pdf", "frame": 2, "mediaType": "application/pdf", "size": len(data)}]
    assert frames[1] == data


# ---------------------------------------------------------------------------
# The CLI spreads a document's pages over every worker
# ---------------------------------------------------------------------------

def test_cli_spreads_a_pdfs_pages_over_every_worker(quire_bin, zctx, tmp_path):
    """`quire recognize doc.pdf` sends each selected page as a PDF of its own: two worker processes
    both read pages, and the result is the document's, in page order, as one request would give it."""
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--stats", "off"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1"],
    ])
    try:
        drawings = [oi.render_lines(["Spread page %d" % n, "read by any worker"], "sans", 40) for n in range(1, 7)]
        f = tmp_path / "six.pdf"
        f.write_bytes(scanned(drawings))
        p = subprocess.run([quire_bin, "recognize", str(f), "--broker", st.url, "--pages", "1-4,6"], capture_output=True, timeout=120, env=_env())
        assert p.returncode == 0, p.stderr.decode()
        doc = validate_result(json.loads(p.stdout))
        assert doc["metadata"]["format"] == "pdf" and doc["metadata"]["pageCount"] == 6
        assert [page["pageNumber"] for page in doc["pages"]] == [1, 2, 3, 4, 6]
        for page, n in zip(doc["pages"], [1, 2, 3, 4, 6]):
            assert [ln["text"] for ln in page_lines(page)] == drawings[n - 1].lines
            assert {s["page"] for s in doc["metadata"]["steps"] if s["page"] == n}, "page %d's steps keep its number" % n
        assert doc["text"] == "\f".join(page["text"] for page in doc["pages"])
        # A page that fails is that page's error; the others are read.
        huge = tmp_path / "huge.pdf"
        huge.write_bytes(huge_page())
        both = tmp_path / "both.pdf"
        subprocess.run(["qpdf", "--empty", "--pages", f, "1", huge, f, "2", "--", both], check=True)
        p = subprocess.run([quire_bin, "recognize", str(both), "--broker", st.url, "--text-layer", "ignore"], capture_output=True, timeout=120, env=_env())
        assert p.returncode == 0, p.stderr.decode()
        pages = validate_result(json.loads(p.stdout))["pages"]
        assert [pg.get("error", {}).get("code") for pg in pages] == [None, "too_many_pixels", None]
        assert pages[1]["error"]["message"].startswith("page 2 is 200"), pages[1]["error"]
    finally:
        for proc in reversed(st.processes):
            proc.stop()
    served = [int(m) for proc in st.processes[1:] for m in re.findall(r'"served":"(\d+)","service":"ocr"', proc.log_path.read_text())]
    assert len(served) == 2 and all(n >= 1 for n in served), "each worker read pages: %s" % served
