"""End-to-end tests of the `ocr` service and `quire recognize`.

Real processes: `quire broker` + `quire worker ocr --threads 2` (once for the module), `quire up`
(once), and the `quire recognize` CLI. Requests go over the wire as a raw MDP/0.2 client
(pyzmq DEALER): [MDPC02, 0x01, "ocr", request JSON, image bytes] -> [MDPC02, 0x03, "ocr", reply].
Images are drawn here (Tests/interop/ocr_images.py) with known text, so every test checks the
words read and where they are. Every result is validated against proto-json/ocr-result.schema.json,
every request sent against ocr-request.schema.json, every error against error.schema.json.

Needs: Tesseract packs eng, osd, hin, chi_sim (Debian tesseract-ocr-eng/-osd/-hin/-chi-sim), fonts
fonts-dejavu-core, fonts-lohit-deva, fonts-wqy-microhei; PyPI pillow, pillow-heif, pyzmq, jsonschema.

"""

import ctypes
import json
import math
import os
import random
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import jsonschema
import pytest
import zmq
from PIL import Image, ImageDraw

import ocr_images as oi
from ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
QUIRE_BIN = os.environ.get("QUIRE_BIN") or str(REPO_ROOT / ".build" / "debug" / "quire")
SCHEMAS = REPO_ROOT / "proto-json"
TESSDATA = Path(os.environ.get("QUIRE_TESSDATA", "/usr/share/tesseract-ocr/5/tessdata"))

MDPC02, REQUEST, PARTIAL, FINAL = b"MDPC02", b"\x01", b"\x02", b"\x03"
SERVICE = b"ocr"
REPLY_TIMEOUT_S = 30.0
MAX_PIXELS = 60_000_000  # the worker's default limit (OCRConfiguration.maxPixels)


# ---------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------

def _validator(name):
    with open(SCHEMAS / name, "rb") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for example in schema.get("examples", []):
        validator.validate(example)
    return validator


REQUEST_SCHEMA = _validator("ocr-request.schema.json")
RESULT_SCHEMA = _validator("ocr-result.schema.json")
ERROR_SCHEMA = _validator("error.schema.json")


def _validate(validator, doc, what):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise AssertionError("%s does not match its schema at %s: %s (%d problems)" % (
            what, "/".join(map(str, e.absolute_path)) or "(root)", e.message, len(errors)))


def validate_result(doc):
    _validate(RESULT_SCHEMA, doc, "ocr result")
    return doc


# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------

_DATA_HOME = tempfile.mkdtemp(prefix="quire-ocr-tests-data-")


def add_client(quire_bin, data, name, scope="ocr"):
    """A client of the token worker whose folder is `data` (`quire clients add`): its id and secret."""
    done = subprocess.run([quire_bin, "clients", "add", name, "--scope", scope, "--json", "--data", str(data)],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _env():
    """The caller's environment without QUIRE_* settings that change the defaults asserted here
    (QUIRE_TESSDATA stays: it says where the packs are; QUIRE_AUTH=off from conftest stays: these tests
    are about OCR, not tokens). `quire up`'s default data folder goes to a temporary place, never
    this machine's real one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_") or k in ("QUIRE_TESSDATA", "QUIRE_AUTH")}
    env["XDG_DATA_HOME"] = tempfile.mkdtemp(dir=_DATA_HOME)
    return env


def _die_with_parent():
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


class Process:
    def __init__(self, argv, log_path):
        self.argv = argv
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "wb")
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                  env=_env(), preexec_fn=_die_with_parent)

    def alive(self):
        return self.p.poll() is None

    def stop(self, timeout=5.0):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)
        if not self._log.closed:
            self._log.close()
        return self.p.returncode

    def tail(self, n=30):
        try:
            lines = self.log_path.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])


class Stack:
    """A broker endpoint with OCR workers behind it (processes owned by the fixture)."""

    def __init__(self, ctx, url, processes):
        self.ctx, self.url, self.processes = ctx, url, processes

    def check_alive(self):
        for p in self.processes:
            if not p.alive():
                raise AssertionError("%s exited (rc=%s):\n%s" % (" ".join(p.argv), p.p.returncode, p.tail()))

    def logs(self):
        return "\n".join("----- %s\n%s" % (" ".join(p.argv), p.tail()) for p in self.processes)

    def call(self, service, frames, timeout=REPLY_TIMEOUT_S):
        """Sends one MDP/0.2 request; returns the FINAL reply's body frames."""
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(self.url)
        try:
            s.send_multipart([MDPC02, REQUEST, service] + list(frames))
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no reply from %r within %.0fs\n%s" % (service, timeout, self.logs()))
                if s.poll(int(min(left, 0.5) * 1000) + 1, zmq.POLLIN):
                    msg = s.recv_multipart()
                    assert len(msg) >= 4 and msg[0] == MDPC02 and msg[1] in (PARTIAL, FINAL) and msg[2] == service, \
                        "bad MDP/0.2 reply envelope: %r" % [m[:40] for m in msg]
                    if msg[1] == FINAL:
                        return msg[3:]
                else:
                    self.check_alive()
        finally:
            s.close(0)

    def wait_ready(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            s = self.ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(self.url)
            try:
                s.send_multipart([MDPC02, REQUEST, b"mmi.service", SERVICE])
                if s.poll(300, zmq.POLLIN) and s.recv_multipart()[3:] == [b"200"]:
                    return self
            finally:
                s.close(0)
            time.sleep(0.05)
        raise AssertionError("service 'ocr' not registered within %.0fs\n%s" % (timeout, self.logs()))


def start_stack(ctx, log_dir, argvs):
    port = free_port()
    url = "tcp://127.0.0.1:%d" % port
    processes = []
    try:
        for i, argv in enumerate(argvs):
            argv = [a.replace("{url}", url) for a in argv]
            processes.append(Process(argv, Path(log_dir) / ("%s-%d-%d.log" % (argv[1], port, i))))
            if i == 0 and len(argvs) > 1:
                time.sleep(0.1)  # let the broker bind before the worker connects (it retries anyway)
        return Stack(ctx, url, processes).wait_ready()
    except BaseException:
        for p in reversed(processes):
            p.stop(timeout=2)
        raise


@pytest.fixture(scope="module")
def quire_bin():
    if not (os.path.isfile(QUIRE_BIN) and os.access(QUIRE_BIN, os.X_OK)):
        pytest.fail("quire binary not found at %s (build it, or set QUIRE_BIN)" % QUIRE_BIN, pytrace=False)
    return QUIRE_BIN


@pytest.fixture(scope="module")
def zctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    """`quire broker` + `quire worker ocr --threads 2`, shared by the module's tests."""
    log_dir = tmp_path_factory.mktemp("ocr-stack")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "2"],
    ])
    yield st
    for p in reversed(st.processes):
        p.stop()


@pytest.fixture(scope="module")
def installed_packs():
    return {p.name[: -len(".traineddata")] for p in TESSDATA.glob("*.traineddata")}


def need_packs(installed, *packs):
    missing = [p for p in packs if p not in installed]
    if missing:
        pytest.fail("Tesseract packs %s are not installed in %s (Debian: %s)" % (
            missing, TESSDATA, " ".join("tesseract-ocr-" + p.replace("_", "-") for p in missing)), pytrace=False)


# ---------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------

def request_frame(options):
    if isinstance(options, (bytes, bytearray)):
        return bytes(options)
    return json.dumps(options).encode()


def ocr(stack, options, image, timeout=REPLY_TIMEOUT_S):
    """A request that must succeed: returns the schema-valid result."""
    if isinstance(options, dict):
        _validate(REQUEST_SCHEMA, options, "ocr request %r" % options)
    body = stack.call(SERVICE, [request_frame(options), image], timeout=timeout)
    assert len(body) == 1, "an ocr reply has one frame; got %d" % len(body)
    doc = json.loads(body[0])
    if "error" in doc:
        _validate(ERROR_SCHEMA, doc, "error reply")
        raise AssertionError("ocr request %r failed: %r" % (options, doc["error"]))
    return validate_result(doc)


def ocr_error(stack, frames, code):
    """A request that must fail with `code`: returns the schema-valid error object."""
    body = stack.call(SERVICE, frames)
    assert len(body) == 1, "an error reply has one frame; got %d" % len(body)
    doc = json.loads(body[0])
    assert "error" in doc, "expected error %r, got a result: %s" % (code, body[0][:300])
    _validate(ERROR_SCHEMA, doc, "error reply")
    assert doc["error"]["code"] == code, "expected error %r, got %r" % (code, doc["error"])
    return doc["error"]


# ---------------------------------------------------------------------------
# Result helpers
# ---------------------------------------------------------------------------

def page_words(page):
    return [w for b in page["blocks"] for p in b["paragraphs"] for ln in p["lines"] for w in ln["words"]]


def page_lines(page):
    return [ln for b in page["blocks"] for p in b["paragraphs"] for ln in p["lines"]]


def all_elements(page):
    for b in page["blocks"]:
        yield b
        for p in b["paragraphs"]:
            yield p
            for ln in p["lines"]:
                yield ln
                for w in ln["words"]:
                    yield w
                    yield from w["symbols"]


def xyxy(box):
    return box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]


def iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def tolerance(box):
    """Pixels a box edge may differ from the textbbox: side bearings, anti-aliasing."""
    return max(4, round(0.15 * (box[3] - box[1])))


def coverage(drawn, got):
    """The fraction of the drawn box that the box read covers."""
    ix = max(0, min(drawn[2], got[2]) - max(drawn[0], got[0]))
    iy = max(0, min(drawn[3], got[3]) - max(drawn[1], got[1]))
    area = (drawn[2] - drawn[0]) * (drawn[3] - drawn[1])
    return ix * iy / area if area else 0.0


def assert_words(page, drawn_words, min_fraction=1.0, case_sensitive=True, tol=None, overlap_only=False):
    """Every drawn word (or `min_fraction` of them) is read, and its box matches where it was drawn:
    IoU >= 0.5 and every edge within a few pixels. With `overlap_only` (noisy scans, where Tesseract
    adds nearby specks to a word) a box covering >= 85% of the drawn box also passes."""
    got = [(w["text"], xyxy(w["boundingBox"])) for w in page_words(page)]
    norm = (lambda s: s) if case_sensitive else (lambda s: s.lower())
    missing, misplaced = [], []
    for dw in drawn_words:
        candidates = [(iou(dw.box, box), text, box) for text, box in got if norm(text) == norm(dw.text)]
        if not candidates:
            missing.append(dw.text)
            continue
        overlap, text, box = max(candidates)
        t = tol if tol is not None else tolerance(dw.box)
        worst = max(abs(a - b) for a, b in zip(box, dw.box))
        covered = coverage(dw.box, box)
        if overlap < 0.5 or (worst > t and not (overlap_only and covered >= 0.85)):
            misplaced.append("%r at %s, drawn at %s (IoU %.2f, %.0f%% covered, edge off by %dpx, tolerance %dpx)" % (
                text, box, dw.box, overlap, 100 * covered, worst, t))
    found = len(drawn_words) - len(missing)
    assert found >= math.ceil(min_fraction * len(drawn_words)), \
        "words not read: %r; read: %r" % (missing, [t for t, _ in got])
    assert not misplaced, "boxes off:\n  " + "\n  ".join(misplaced)


def near(a, b, tolerance):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def assert_geometry_consistent(page, nested=True):
    """Polygons run clockwise from top-left: the boxes' corners, or on a deskewed page the recognised
    rectangle's corners leaning with the text, with the box around them; boxes lie within the page;
    words lie within their lines."""
    W, H = page["width"], page["height"]
    for e in all_elements(page):
        x0, y0, x1, y1 = xyxy(e["boundingBox"])
        poly = [(p["x"], p["y"]) for p in e["polygon"]]
        if poly != [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]:
            xs, ys = [p[0] for p in poly], [p[1] for p in poly]
            # The box rounds the corners outwards, the polygon to the nearest pixel.
            assert near((min(xs), min(ys), max(xs), max(ys)), (x0, y0, x1, y1), 1), (e["text"], poly, (x0, y0, x1, y1))
            (ax, ay), (bx, by), (cx, cy), (dx, dy) = poly
            assert bx > ax and cy > by and dx < cx and ay < dy, (e["text"], poly)  # clockwise from top-left
            # Leaning the page's way: rising to the right when the page was turned clockwise to read.
            if abs(page["deskewAngle"]) >= 1 and bx - ax > 2 * abs(by - ay) > 0:
                assert (ay - by > 0) == (page["deskewAngle"] > 0), (e["text"], poly, page["deskewAngle"])
        assert 0 <= x0 <= x1 <= W and 0 <= y0 <= y1 <= H, "box %s outside the %dx%d page" % ((x0, y0, x1, y1), W, H)
    for ln in page_lines(page) if nested else []:
        lb = xyxy(ln["boundingBox"])
        for w in ln["words"]:
            wb = xyxy(w["boundingBox"])
            assert lb[0] <= wb[0] and lb[1] <= wb[1] and wb[2] <= lb[2] and wb[3] <= lb[3], (w["text"], wb, lb)


def apply(transform, x, y):
    a, b, c, d, e, f = transform
    return a * x + b * y + c, d * x + e * y + f


# A small image any working worker reads: used after each error.
GOOD = oi.render_lines(["Still working fine"], "sans", 36)
GOOD_PNG = oi.png(GOOD.image)


def assert_still_serves(stack):
    page = ocr(stack, {}, GOOD_PNG)["pages"][0]
    assert_words(page, GOOD.words)


# ---------------------------------------------------------------------------
# Fonts, sizes, layout
# ---------------------------------------------------------------------------

FONT_CASES = [
    ("sans", 40, ["Quire reads printed pages", "with boxes for every word"]),
    ("serif", 28, ["The quick brown fox jumps", "over the lazy dog again"]),
    ("mono", 22, ["Invoice 4711 total 250 EUR", "payable within thirty days"]),
    ("bold", 56, ["Harbour lights", "seven quiet zebras"]),
    ("serif", 16, ["Small print matters too", "when reading contracts"]),
]


@pytest.mark.parametrize("font_name,size,lines", FONT_CASES, ids=["%s-%d" % c[:2] for c in FONT_CASES])
def test_fonts_and_sizes(stack, font_name, size, lines):
    drawn = oi.render_lines(lines, font_name, size)
    doc = ocr(stack, {}, oi.png(drawn.image))
    assert doc["metadata"]["format"] == "png"
    assert doc["metadata"]["languages"] == ["en"]
    assert doc["metadata"]["mode"] == "document"
    assert doc["metadata"]["pageCount"] == 1
    assert doc["metadata"]["engine"].startswith("tesseract ")
    (page,) = doc["pages"]
    assert (page["pageNumber"], page["width"], page["height"]) == (1, *drawn.image.size)
    assert (page["rotation"], page["mirrored"], page["transform"]) == (0, False, [1, 0, 0, 0, 1, 0])
    # Small print is enlarged for recognition (by the glyphs' height); boxes still come back in
    # the uploaded pixels (assert_words below).
    scale_step = next(s for s in doc["metadata"]["steps"] if s["step"] == "scale")
    assert page["recognitionScale"] == (1 if scale_step["parameters"]["glyphHeight"] >= 16 else pytest.approx(scale_step["parameters"]["factor"], abs=0.01))
    assert [ln["text"] for ln in page_lines(page)] == drawn.lines
    assert doc["text"] == page["text"] and page["text"].split() == [w.text for w in drawn.words]
    assert page["languages"] == ["en"]
    assert_words(page, drawn.words)
    assert_geometry_consistent(page)
    words = page_words(page)
    for w in words:
        assert w["languages"] == ["en"]
        assert "".join(s["text"] for s in w["symbols"]) == w["text"]
    assert words[-1]["break"] == "paragraph"
    for ln in page_lines(page):
        assert [w["break"] for w in ln["words"][:-1]] == ["space"] * (len(ln["words"]) - 1)
        assert ln["direction"] == "ltr"
        # A level line's baseline is level and at the bottom of the letters without descenders.
        bl = ln["baseline"]
        assert abs(bl["end"]["y"] - bl["start"]["y"]) <= 1, bl


# ---------------------------------------------------------------------------
# Degraded scans: skew, blur, noise
# ---------------------------------------------------------------------------

SKEW_TEXT = ["Invoice number 4711", "Total amount due today"]


def _degrade(kind):
    d = oi.render_lines(SKEW_TEXT, "sans", 36)
    if kind == "skew+3":
        return oi.rotate(d, 3)
    if kind == "skew-4":
        return oi.rotate(d, -4)
    if kind == "blur":
        return oi.blur(d, 1.5)
    if kind == "noise":
        return oi.noise(d, amount=0.3, speckles=0.004, seed=11)
    if kind == "skew+blur+noise":
        return oi.noise(oi.blur(oi.rotate(d, 2), 1.2), amount=0.25, seed=7)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["skew+3", "skew-4", "blur", "noise", "skew+blur+noise"])
def test_degraded_scans(stack, kind):
    drawn = _degrade(kind)
    doc = ocr(stack, {}, oi.png(drawn.image))
    (page,) = doc["pages"]
    assert (page["width"], page["height"]) == drawn.image.size
    clean = kind.startswith("skew") and "noise" not in kind
    # Skewed words' boxes are the upright boxes around the turned words: looser, same idea.
    assert_words(page, drawn.words, min_fraction=1.0 if clean else 0.85, case_sensitive=clean,
                 tol=None if not kind.startswith("skew") else 8, overlap_only="noise" in kind)
    assert_geometry_consistent(page)
    if clean:
        angle = float(kind[4:])
        for ln in page_lines(page):
            bl = ln["baseline"]
            slope = math.degrees(math.atan2(-(bl["end"]["y"] - bl["start"]["y"]), bl["end"]["x"] - bl["start"]["x"]))
            assert abs(slope - angle) < 1.0, "line %r: baseline slope %.2f°, page turned %.1f°" % (ln["text"], slope, angle)


def test_ink_is_darkened_on_clean_paper_and_not_on_grainy_paper(stack):
    """The `ink` step runs on a document whose paper is clean, with what it measured, and keeps off a
    grainy scan, where the tone curve would turn the paper's grain as dark as the print, and off a page
    already black on white (a rendered page: nothing faint to save)."""
    def ink_step(image):
        doc = ocr(stack, {}, oi.png(image))
        (step,) = [s for s in doc["metadata"]["steps"] if s["step"] == "ink"]
        return step
    rendered = oi.render_lines(SKEW_TEXT, "sans", 36).image
    black_on_white = ink_step(rendered)
    assert not black_on_white["applied"], black_on_white
    assert black_on_white["parameters"]["inkLevel"] == 0 and black_on_white["parameters"]["paperLevel"] == 255, black_on_white
    # A scan of the same: ink a dark grey, paper nearly white.
    clean = ink_step(rendered.point(lambda v: 40 + v * 210 // 255))
    assert clean["applied"] and clean["parameters"]["exponent"] == 3, clean
    assert clean["parameters"]["inkLevel"] < 60 and clean["parameters"]["paperLevel"] >= 200, clean
    grainy = ink_step(_degrade("noise").image)
    assert not grainy["applied"] and grainy["parameters"]["paperLevel"] < grainy["parameters"]["minPaperLevel"], grainy
    # White paper is not stretched; thermal paper's grey is: its level becomes white.
    assert clean["parameters"]["white"] == 255, clean
    grey = oi.render_lines(["Nasi Lemak 12.50", "Teh Tarik 4.20", "TOTAL 16.70"], "mono", 30).image.convert("L")
    rng = random.Random(7)
    grey = grey.point(lambda v: 60 + v * 165 // 255)  # paper 225, ink 60
    pixels = grey.load()
    for y in range(grey.height):
        for x in range(grey.width):
            if pixels[x, y] > 200:
                pixels[x, y] = pixels[x, y] + rng.randint(-4, 4)
    doc = ocr(stack, {}, oi.png(grey))
    (thermal,) = [s for s in doc["metadata"]["steps"] if s["step"] == "ink"]
    assert thermal["applied"] and thermal["parameters"]["paperLevel"] < 240, thermal
    assert thermal["parameters"]["white"] == thermal["parameters"]["paperLevel"], thermal
    assert "TOTAL 16.70" in doc["text"], doc["text"]
    # Line mode has no ink step.
    line = ocr(stack, {"mode": "line"}, oi.png(oi.render_lines(["Total 12.50"], "sans", 36).image))
    assert "ink" not in [s["step"] for s in line["metadata"]["steps"]]


def test_blank_and_noise_pages_come_back_empty_with_their_blank_step(stack):
    """A page with nothing to read (one flat grey, random noise) comes back as a schema-valid result
    with an empty page of its own size and the applied `blank` step as its only step, and a JPEG of
    noise (probed from its grey decode) goes the same way."""
    rng = random.Random(37)
    noise = Image.frombytes("L", (700, 500), bytes(rng.randrange(256) for _ in range(700 * 500)))
    cases = [(oi.png(Image.new("RGB", (640, 480), (200, 200, 200))), "range", (640, 480)),
             (oi.png(noise), "neighbourCorrelation", (700, 500)),
             (oi.encode(noise, "JPEG", quality=95), "neighbourCorrelation", (700, 500))]
    for image, parameter, (width, height) in cases:
        doc = ocr(stack, {}, image)
        (page,) = doc["pages"]
        assert (page["width"], page["height"]) == (width, height), page
        assert page["blocks"] == [] and doc["text"] == "", doc["text"]
        (step,) = doc["metadata"]["steps"]
        assert step["step"] == "blank" and step["applied"] and parameter in step["parameters"], step
    assert_still_serves(stack)


def test_a_receipts_odd_decimal_comma_takes_the_dot_the_receipt_uses(stack):
    """A receipt that writes its amounts with dots gets the one amount read with a comma changed to a
    dot (`decimals` step: words and texts), and a page of comma amounts keeps its commas."""
    receipt = ["Nasi Lemak 12.50", "Teh Tarik 4.20", "Roti Canai 7.00", "TOTAL 33,90"]
    doc = ocr(stack, {}, oi.png(oi.render_lines(receipt, "mono", 36).image))
    (step,) = [s for s in doc["metadata"]["steps"] if s["step"] == "decimals"]
    assert step["applied"] and step["parameters"] == {"wordsChanged": 1, "amountsWithDot": 3, "amountsWithComma": 1, "amountsJoined": 0}, step
    assert "TOTAL 33.90" in doc["text"] and "33,90" not in doc["text"], doc["text"]
    words = [w["text"] for b in doc["pages"][0]["blocks"] for p in b["paragraphs"] for ln in p["lines"] for w in ln["words"]]
    assert "33.90" in words and "33,90" not in words, words
    german = ["Brot 2,50", "Milch 1,19", "Butter 3,69", "Summe 7,38"]
    doc = ocr(stack, {}, oi.png(oi.render_lines(german, "mono", 36).image))
    (step,) = [s for s in doc["metadata"]["steps"] if s["step"] == "decimals"]
    assert not step["applied"] and step["parameters"]["amountsWithComma"] == 4, step
    assert "Summe 7,38" in doc["text"], doc["text"]


def test_deskew_angle_reports_the_skew(stack):
    drawn = _degrade("skew+3")
    page = ocr(stack, {}, oi.png(drawn.image))["pages"][0]
    assert 2.0 <= abs(page["deskewAngle"]) <= 4.0, page["deskewAngle"]


# ---------------------------------------------------------------------------
# Formats: multi-page TIFF, HEIC
# ---------------------------------------------------------------------------

TIFF_PAGES = [
    (["First page alpha", "opening remarks"], "sans", 40),
    (["Second page bravo", "with the details"], "serif", 40),
    (["Third page charlie", "closing summary"], "mono", 40),
]


def _tiff(sizes=None):
    drawn = []
    for i, (lines, font_name, size) in enumerate(TIFF_PAGES):
        w, h = sizes[i] if sizes else (760, 260)
        drawn.append(oi.render_lines(lines, font_name, size, width=w, height=h))
    return drawn, oi.tiff_pages([d.image for d in drawn])


def test_multipage_tiff(stack):
    drawn, data = _tiff()
    doc = ocr(stack, {}, data)
    assert doc["metadata"]["format"] == "tiff" and doc["metadata"]["pageCount"] == 3
    assert [p["pageNumber"] for p in doc["pages"]] == [1, 2, 3]
    for page, d in zip(doc["pages"], drawn):
        assert (page["width"], page["height"]) == d.image.size
        assert [ln["text"] for ln in page_lines(page)] == d.lines
        assert_words(page, d.words)
        assert_geometry_consistent(page)
    assert doc["text"] == "\f".join(p["text"] for p in doc["pages"])

    # Only the pages asked for, in the order asked.
    doc = ocr(stack, {"pages": [3, 1]}, data)
    assert doc["metadata"]["pageCount"] == 3
    assert [p["pageNumber"] for p in doc["pages"]] == [3, 1]
    assert_words(doc["pages"][0], drawn[2].words)
    assert_words(doc["pages"][1], drawn[0].words)

    err = ocr_error(stack, [request_frame({"pages": [4]}), data], "bad_request")
    assert "4" in err["message"]
    assert_still_serves(stack)


def test_multipage_tiff_with_pages_of_different_sizes(stack):
    drawn, data = _tiff(sizes=[(700, 220), (1400, 600), (560, 420)])
    doc = ocr(stack, {}, data)
    for page, d in zip(doc["pages"], drawn):
        assert (page["width"], page["height"]) == d.image.size, "page %d" % page["pageNumber"]
        assert page["recognitionScale"] == 1
        assert_words(page, d.words)


def test_pixel_limit_applies_to_every_tiff_page(stack):
    small = oi.render_lines(["Cover page"], "sans", 40).image.convert("1")
    data = oi.tiff_pages([small, Image.new("1", (9000, 9000), 1)], compression="group4")
    err = ocr_error(stack, [b"{}", data], "too_many_pixels")
    assert err.get("limit") == MAX_PIXELS


def test_a_page_longer_than_the_engine_reads_is_reduced_to_fit(stack):
    """Tesseract refuses a page longer than 32,767 pixels on a side. A long strip within the pixel
    limit is read reduced to that length (its words found, in the strip's own coordinates); one so thin
    that reduced it would be under a pixel across is refused before decoding, with the reason."""
    drawn = oi.render_lines(["Long receipt, scanned whole"], "sans", 56)
    strip = Image.new("L", (34_000, drawn.image.height), 255)
    strip.paste(drawn.image, (0, 0))
    doc = ocr(stack, {}, oi.png(strip))
    (page,) = doc["pages"]
    assert (page["width"], page["height"]) == strip.size
    assert page["recognitionScale"] <= 32_767 / 34_000 + 1e-4, page["recognitionScale"]  # rounded to 4 places
    assert_words(page, drawn.words)
    err = ocr_error(stack, [b"{}", oi.png(Image.new("L", (40_000, 1), 255))], "too_many_pixels")
    assert "40000×1" in err["message"] and "less than a pixel" in err["message"], err
    assert_still_serves(stack)


def test_heic(stack):
    drawn = oi.render_lines(["Photographed on a phone", "stored as HEIC"], "sans", 44)
    data = oi.heic(drawn.image)
    assert data[4:12] == b"ftypheic"
    doc = ocr(stack, {}, data)
    assert doc["metadata"]["format"] == "heic"
    (page,) = doc["pages"]
    assert (page["width"], page["height"], page["rotation"]) == (*drawn.image.size, 0)
    assert_words(page, drawn.words)


# ---------------------------------------------------------------------------
# Orientation: EXIF (JPEG) and detection (OSD)
# ---------------------------------------------------------------------------

ORIENT_TEXT = ["Invoice number 4711", "Total amount due today"]


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation(stack, orientation):
    drawn = oi.render_lines(ORIENT_TEXT, "sans", 36)
    W, H = drawn.image.size
    doc = ocr(stack, {}, oi.exif_jpeg(drawn.image, orientation))
    assert doc["metadata"]["format"] == "jpeg"
    (page,) = doc["pages"]
    assert (page["rotation"], page["mirrored"]) == oi.EXPECTED_ROTATION[orientation]
    # The page is the upright picture, and so are the boxes.
    assert (page["width"], page["height"]) == (W, H)
    assert [ln["text"] for ln in page_lines(page)] == drawn.lines
    assert_words(page, drawn.words)
    assert_geometry_consistent(page)
    # `transform` takes upright coordinates to the stored pixel grid.
    to_stored = oi.upright_to_stored(orientation, W, H)
    for x, y in ((0, 0), (W, 0), (0, H), (W, H), (17, 5)):
        assert apply(page["transform"], x, y) == pytest.approx(to_stored(x, y)), (x, y, page["transform"])


# PIL's rotate() turns counter-clockwise; the stored image then needs that many degrees clockwise,
# and the stored pixels relate to the upright ones as for these EXIF orientations.
AUTO_CASES = {90: 6, 180: 3, 270: 8}


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_auto_orientation(stack, degrees):
    drawn = oi.render_lines(ORIENT_TEXT, "sans", 36)
    W, H = drawn.image.size
    data = oi.png(drawn.image.rotate(degrees, expand=True))
    doc = ocr(stack, {"autoOrientation": True}, data)
    (page,) = doc["pages"]
    assert (page["rotation"], page["mirrored"]) == (degrees, False)
    assert (page["width"], page["height"]) == (W, H)
    assert [ln["text"] for ln in page_lines(page)] == drawn.lines
    assert_words(page, drawn.words)
    to_stored = oi.upright_to_stored(AUTO_CASES[degrees], W, H)
    for x, y in ((0, 0), (W, 0), (0, H), (W, H)):
        assert apply(page["transform"], x, y) == pytest.approx(to_stored(x, y))


PROSE = ["Quarterly report for the northern region", "Revenue grew by twelve percent",
         "Costs stayed flat across all units", "Hiring resumes in the spring"]


def test_large_photo_is_scaled_turned_and_mapped_back(stack):
    """A 12 MP phone photo: EXIF says "turn 90° clockwise", and the paper was upside down in the
    frame too. Quire scales it down for recognition, applies EXIF, detects the other 180°; the
    boxes still come back in upright pixels of the uploaded size."""
    drawn = oi.render_lines(PROSE, "serif", 80, width=4000, height=3000, margin=300)
    W, H = drawn.image.size
    data = oi.exif_jpeg(drawn.image.rotate(180), 6, quality=88)
    doc = ocr(stack, {"autoOrientation": True}, data)
    (page,) = doc["pages"]
    assert (page["width"], page["height"]) == (W, H)
    assert (page["rotation"], page["mirrored"]) == (270, False)
    assert 0 < page["recognitionScale"] < 1
    assert_words(page, drawn.words)
    assert_geometry_consistent(page)
    # Stored pixels: the upright page turned 180°, then stored as for EXIF 6 (3000 x 4000).
    for x, y in ((0, 0), (W, 0), (0, H), (123, 45)):
        assert apply(page["transform"], x, y) == pytest.approx((H - y, x)), (x, y, page["transform"])


def test_upright_page_is_not_turned_by_auto_orientation(stack):
    drawn = oi.render_lines(ORIENT_TEXT, "sans", 36)
    page = ocr(stack, {"autoOrientation": True}, oi.png(drawn.image))["pages"][0]
    assert (page["rotation"], page["transform"]) == (0, [1, 0, 0, 0, 1, 0])
    assert_words(page, drawn.words)


# ---------------------------------------------------------------------------
# Options: modes, language forms, renderings
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["text", "line", "document"])
def test_modes(stack, mode):
    drawn = oi.render_lines(["Single line of words"], "sans", 36)
    doc = ocr(stack, {"mode": mode}, oi.png(drawn.image))
    assert doc["metadata"]["mode"] == mode
    assert_words(doc["pages"][0], drawn.words)


def test_languages_as_one_string(stack, installed_packs):
    need_packs(installed_packs, "deu")
    drawn = oi.render_lines(["Guten Morgen und Hallo"], "serif", 36)
    doc = ocr(stack, {"languages": "eng+deu"}, oi.png(drawn.image))
    assert doc["metadata"]["languages"] == ["en", "de"]
    page = doc["pages"][0]
    assert_words(page, drawn.words)
    assert all(w["languages"] and w["languages"][0] in ("en", "de") for w in page_words(page))


def test_renderings(stack):
    drawn = oi.render_lines(["Alpha file one", "Bravo line two"], "sans", 36)
    doc = ocr(stack, {"outputs": ["result", "text", "hocr", "alto", "tsv"]}, oi.png(drawn.image))
    (page,) = doc["pages"]
    r = page["renderings"]
    assert set(r) == {"text", "hocr", "alto", "tsv"}
    assert r["text"] == page["text"]
    assert "ocr_page" in r["hocr"] and "ocrx_word" in r["hocr"] and ">Alpha<" in r["hocr"]
    assert 'CONTENT="Alpha"' in r["alto"]
    # TSV word rows (level 5) are the JSON words with the same boxes.
    rows = [ln.split("\t") for ln in r["tsv"].splitlines()]
    tsv_words = [(c[11], tuple(int(v) for v in c[6:10])) for c in rows if c[0] == "5"]
    json_words = [(w["text"], (w["boundingBox"]["x"], w["boundingBox"]["y"], w["boundingBox"]["width"],
                               w["boundingBox"]["height"])) for w in page_words(page)]
    assert tsv_words == json_words
    assert all(c[1] == "1" for c in rows), "page_num column"
    # Without outputs there are no renderings at all (omitted, not null).
    assert "renderings" not in ocr(stack, {}, oi.png(drawn.image))["pages"][0]


def test_small_text_is_enlarged_whatever_the_declared_dpi(stack):
    # Scaling follows the glyphs' height, not the declared resolution (a fax says 72 dpi or nothing,
    # a screenshot says 72 dpi with large text): small print is enlarged, ordinary print is not.
    small = oi.render_lines(["Faxed at low resolution", "still readable"], "sans", 13)
    for request, dpi in (({}, (72, 72)), ({"dpi": 300}, (72, 72)), ({}, (300, 300))):
        page = ocr(stack, request, oi.png(small.image, dpi=dpi))["pages"][0]
        assert page["recognitionScale"] > 1.5, (request, dpi, page["recognitionScale"])
        assert (page["width"], page["height"]) == small.image.size
        assert_words(page, small.words)
        assert_geometry_consistent(page)
    ordinary = oi.render_lines(["Screenshot at 72 dpi", "with ordinary text"], "sans", 30)
    page = ocr(stack, {}, oi.png(ordinary.image, dpi=(72, 72)))["pages"][0]
    assert page["recognitionScale"] == 1
    assert_words(page, ordinary.words)


def test_renderings_use_page_coordinates_for_enlarged_scans(stack):
    drawn = oi.render_lines(["Alpha file one, two and three"], "sans", 13)
    doc = ocr(stack, {"outputs": ["tsv", "hocr"]}, oi.png(drawn.image, dpi=(72, 72)))
    (page,) = doc["pages"]
    assert page["recognitionScale"] > 1.5
    assert_words(page, drawn.words)  # the JSON result is right
    rows = [ln.split("\t") for ln in page["renderings"]["tsv"].splitlines()]
    page_row = next(c for c in rows if c[0] == "1")
    assert (int(page_row[8]), int(page_row[9])) == drawn.image.size
    assert "bbox 0 0 %d %d" % drawn.image.size in page["renderings"]["hocr"]


# ---------------------------------------------------------------------------
# Non-Latin scripts
# ---------------------------------------------------------------------------

def test_hindi_devanagari(stack, installed_packs):
    need_packs(installed_packs, "hin")
    assert oi.DEVANAGARI_FONT.exists(), "Devanagari font missing (Debian fonts-lohit-deva)"
    drawn = oi.render_lines(["नमस्ते दुनिया", "भारत सरकार"], oi.DEVANAGARI_FONT, 48, language="hi")
    doc = ocr(stack, {"languages": ["hi"]}, oi.png(drawn.image))
    assert doc["metadata"]["languages"] == ["hi"]
    (page,) = doc["pages"]
    assert page["languages"] == ["hi"]
    assert [ln["text"] for ln in page_lines(page)] == drawn.lines
    assert_words(page, drawn.words)
    assert all(w["languages"] == ["hi"] for w in page_words(page))


def test_chinese_simplified(stack, installed_packs):
    need_packs(installed_packs, "chi_sim")
    assert oi.CJK_FONT.exists(), "CJK font missing (Debian fonts-wqy-microhei)"
    lines = ["中华人民共和国", "北京大学"]
    drawn = oi.render_lines([[ln] for ln in lines], oi.CJK_FONT, 48)
    doc = ocr(stack, {"languages": ["zh-Hans"]}, oi.png(drawn.image))
    assert doc["metadata"]["languages"] == ["zh-Hans"]
    (page,) = doc["pages"]
    assert page["languages"] == ["zh-Hans"]
    got = page_lines(page)
    # Tesseract splits Chinese into "words" its own way: compare each line's characters.
    assert ["".join(w["text"] for w in ln["words"]) for ln in got] == lines
    assert all(w["languages"] == ["zh-Hans"] for w in page_words(page))
    # Line boxes match the drawn lines. (Tesseract's chi_sim word and symbol boxes are not reliable
    # horizontally -- the tesseract CLI reports the same ones -- so they are not checked here.)
    for ln, dw in zip(got, drawn.words):
        box = xyxy(ln["boundingBox"])
        assert iou(box, dw.box) > 0.7 and max(abs(a - b) for a, b in zip(box, dw.box)) <= tolerance(dw.box), (ln["text"], box, dw.box)
    assert_geometry_consistent(page, nested=False)


# ---------------------------------------------------------------------------
# Errors: each is typed, schema-valid, and the worker keeps serving
# ---------------------------------------------------------------------------

def _random_bytes(n=5000, seed=1):
    return random.Random(seed).randbytes(n)


ERROR_CASES = {
    "not-an-image": (lambda: [b"{}", b"GIF" + _random_bytes()[3:]], "not_an_image"),
    "random-bytes": (lambda: [b"{}", _random_bytes()], "not_an_image"),
    "empty-image-frame": (lambda: [b"{}", b""], "not_an_image"),
    "truncated-png": (lambda: [b"{}", oi.truncated(oi.png(GOOD.image), 0.5)], "corrupt_image"),
    "truncated-jpeg": (lambda: [b"{}", oi.truncated(oi.jpeg(GOOD.image), 0.6)], "corrupt_image"),
    "jpeg-header-only": (lambda: [b"{}", oi.jpeg(GOOD.image)[:300]], "corrupt_image"),
    "too-many-pixels": (lambda: [b"{}", oi.huge_bilevel_png(12000, 12000)], "too_many_pixels"),
    "unknown-language": (lambda: [b'{"languages":["tlh"]}', GOOD_PNG], "unknown_language"),
    "dpi-out-of-range": (lambda: [b'{"dpi":5}', GOOD_PNG], "bad_request"),
    "pages-zero": (lambda: [b'{"pages":[0]}', GOOD_PNG], "bad_request"),
    "page-beyond-end": (lambda: [b'{"pages":[2]}', GOOD_PNG], "bad_request"),
    "languages-empty": (lambda: [b'{"languages":[]}', GOOD_PNG], "bad_request"),
    "languages-wrong-type": (lambda: [b'{"languages":42}', GOOD_PNG], "bad_request"),
    "autoOrientation-wrong-type": (lambda: [b'{"autoOrientation":"yes"}', GOOD_PNG], "bad_request"),
    "not-json": (lambda: [b"this is not json", GOOD_PNG], "invalid_json"),
    "json-array": (lambda: [b"[1, 2]", GOOD_PNG], "invalid_json"),
    "one-frame": (lambda: [b"{}"], "bad_request"),
    "three-frames": (lambda: [b"{}", GOOD_PNG, b"extra"], "bad_request"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors(stack, case):
    make, code = ERROR_CASES[case]
    frames = make()
    err = ocr_error(stack, frames, code)
    assert err["retryable"] is False
    if code == "too_many_pixels":
        assert err.get("limit") == MAX_PIXELS and "12000" in err["message"]
    if code == "unknown_language":
        assert "tlh" in err["message"] and "eng" in err["message"], err["message"]
    # The request schema agrees with the worker about which options are bad.
    if code in ("bad_request", "unknown_language") and len(frames) == 2:
        options = json.loads(frames[0])
        assert REQUEST_SCHEMA.is_valid(options) == (code == "unknown_language" or case == "page-beyond-end"), options
    assert_still_serves(stack)


def test_truncated_tiffs_leave_the_workers_log_to_the_worker(stack):
    """A TIFF cut short is answered (corrupt_image, or what of the page decoded), and the C libraries'
    own complaints about it (Leptonica's "Bad file: amount too big") stay out of the worker's log: a
    client's bad files must not fill it with lines that are not the worker's JSON."""
    data = oi.tiff_pages([GOOD.image], compression="tiff_lzw")
    written = {p: p.log_path.stat().st_size for p in stack.processes}
    for share in (0.05, 0.3, 0.6, 0.9):
        body = stack.call(SERVICE, [b"{}", oi.truncated(data, share)])
        doc = json.loads(body[0])
        if "error" in doc:
            _validate(ERROR_SCHEMA, doc, "error reply")
        else:
            validate_result(doc)
    assert_still_serves(stack)
    for process in stack.processes:
        for line in process.log_path.read_bytes()[written[process]:].decode("utf-8", "replace").splitlines():
            assert not line.strip() or line.lstrip().startswith("{"), "%s wrote %r" % (process.argv[1], line)


# Cases once answered with the wrong code (kept as regression tests): a compressed BMP must be
# unsupported_format, valid JSON with a wrong value bad_request (not invalid_json), no frames bad_request.
MORE_BAD = {
    "rle-bmp": ((lambda: [b"{}", oi.rle8_bmp()]), "unsupported_format"),
    "mode-x": ((lambda: [b'{"mode":"x"}', GOOD_PNG]), "bad_request"),
    "outputs-docx": ((lambda: [b'{"outputs":["docx"]}', GOOD_PNG]), "bad_request"),
    "dpi-fraction": ((lambda: [b'{"dpi":300.5}', GOOD_PNG]), "bad_request"),
    "no-frames": ((lambda: []), "bad_request"),
}


@pytest.mark.parametrize("case", list(MORE_BAD))
def test_errors_valid_json_wrong_values(stack, case):
    make, code = MORE_BAD[case]
    frames = make()
    try:
        err = ocr_error(stack, frames, code)
        assert err["retryable"] is False
    finally:
        assert_still_serves(stack)
    if code == "bad_request" and len(frames) == 2:
        # The schema rejects these options too.
        assert not REQUEST_SCHEMA.is_valid(json.loads(frames[0]))


def test_request_schema_matches_what_the_worker_accepts(stack):
    """Edge cases the schema allows: the worker accepts them too."""
    for options in ({"mode": None, "dpi": None}, {"languages": "eng+"}, {"dpi": 300.0}, {"pages": [1, 1]},
                    {"unknownMember": 1}, {"outputs": []}, {"languages": ["en-GB"]}):
        assert REQUEST_SCHEMA.is_valid(options), options
        doc = ocr(stack, options, GOOD_PNG)
        assert all(p["text"].split() == [w.text for w in GOOD.words] for p in doc["pages"]), options


# ---------------------------------------------------------------------------
# The CLI: quire recognize
# ---------------------------------------------------------------------------

def recognize(quire_bin, stack, *args, stdin=None, timeout=60):
    p = subprocess.run([quire_bin, "recognize", *map(str, args), "--broker", stack.url],
                       input=stdin, capture_output=True, timeout=timeout, env=_env())
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("ocr-files")
    out = {}
    a = oi.render_lines(["Alpha file one"], "sans", 40)
    b = oi.render_lines(["Bravo file two"], "serif", 40)
    (d / "a.png").write_bytes(oi.png(a.image))
    (d / "b.jpg").write_bytes(oi.jpeg(b.image))
    (d / "bad.bin").write_bytes(_random_bytes(3000, seed=5))
    drawn, data = _tiff()
    (d / "three.tif").write_bytes(data)
    big = oi.render_lines(["A larger page read first"] * 12, "serif", 30)
    (d / "big.png").write_bytes(oi.png(big.image))
    turned = oi.render_lines(ORIENT_TEXT, "sans", 36)
    (d / "turned.png").write_bytes(oi.png(turned.image.rotate(90, expand=True)))
    out.update(dir=d, a=a, b=b, tiff=drawn, big=big, turned=turned)
    return out


def test_cli_json_one_file(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png")
    assert rc == 0, err
    doc = validate_result(json.loads(out))
    assert_words(doc["pages"][0], files["a"].words)


def test_cli_json_lines_in_input_order(quire_bin, stack, files):
    d = files["dir"]
    names = [d / "big.png", d / "a.png", d / "b.jpg", d / "three.tif"]
    rc, out, err = recognize(quire_bin, stack, *names)
    assert rc == 0, err
    lines = out.splitlines()
    assert [json.loads(ln)["file"] for ln in lines] == [str(n) for n in names]
    assert all('"file":"%s"' % n in ln for ln, n in zip(lines, names)), "paths with their slashes as they are"
    docs = [validate_result(json.loads(ln)["result"]) for ln in lines]
    assert_words(docs[1]["pages"][0], files["a"].words)
    assert_words(docs[2]["pages"][0], files["b"].words)
    assert [p["pageNumber"] for p in docs[3]["pages"]] == [1, 2, 3]
    for page, drawn in zip(docs[3]["pages"], files["tiff"]):
        assert_words(page, drawn.words)


def test_cli_failures_exit_1_and_name_the_files(quire_bin, stack, files):
    d = files["dir"]
    rc, out, err = recognize(quire_bin, stack, d / "a.png", d / "bad.bin", d / "b.jpg", d / "missing.png")
    assert rc == 1
    assert "bad.bin" in err and "not_an_image" in err, err
    assert "missing.png" in err, err
    assert "a.png:" not in err and "b.jpg:" not in err, err
    results = [json.loads(ln) for ln in out.splitlines()]
    assert [r["file"] for r in results] == [str(d / "a.png"), str(d / "b.jpg")]
    for r in results:
        validate_result(r["result"])


def test_cli_stdin(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, "-", stdin=(files["dir"] / "b.jpg").read_bytes())
    assert rc == 0, err
    doc = validate_result(json.loads(out))
    assert doc["metadata"]["format"] == "jpeg"
    assert_words(doc["pages"][0], files["b"].words)


def test_cli_format_text(quire_bin, stack, files):
    d = files["dir"]
    rc, out, err = recognize(quire_bin, stack, d / "a.png", "--format", "text")
    assert rc == 0, err
    assert out.split() == ["Alpha", "file", "one"]
    rc, out, err = recognize(quire_bin, stack, d / "a.png", d / "b.jpg", "--format", "text")
    assert rc == 0, err
    assert out.splitlines() == ["==> %s <==" % (d / "a.png"), "Alpha file one", "==> %s <==" % (d / "b.jpg"), "Bravo file two"]


def test_cli_format_hocr(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--format", "hocr")
    assert rc == 0, err
    assert "ocr_page" in out and "ocrx_word" in out
    assert all(">%s<" % w in out for w in ("Alpha", "file", "one"))


def test_cli_format_alto_words(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--format", "alto")
    assert rc == 0, err
    assert all('CONTENT="%s"' % w in out for w in ("Alpha", "file", "one"))


def test_cli_format_alto_document(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--format", "alto")
    assert rc == 0, err
    assert "<alto" in out and "</alto>" in out


def test_cli_format_tsv_rows(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--format", "tsv")
    assert rc == 0, err
    rows = [ln.split("\t") for ln in out.splitlines() if ln]
    assert all(len(r) == 12 for r in rows), rows
    assert [r[11] for r in rows if r[0] == "5"] == ["Alpha", "file", "one"]


def test_cli_format_tsv_header(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--format", "tsv")
    assert rc == 0, err
    assert out.splitlines()[0].startswith("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext")


def test_cli_pages(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "three.tif", "--pages", "1,3", "--format", "text")
    assert rc == 0, err
    # Pages apart by a form feed, as the tesseract CLI writes them; the last one has none after it.
    first, third = out.split("\f")
    assert first.splitlines() == files["tiff"][0].lines and third.splitlines() == files["tiff"][2].lines
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "three.tif", "--pages", "1,3")
    assert rc == 0, err
    doc = validate_result(json.loads(out))
    assert [p["pageNumber"] for p in doc["pages"]] == [1, 3]


def test_cli_languages_mode_and_auto_orientation(quire_bin, stack, files):
    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--languages", "en", "--mode", "line")
    assert rc == 0, err
    doc = validate_result(json.loads(out))
    assert (doc["metadata"]["languages"], doc["metadata"]["mode"]) == (["en"], "line")
    assert_words(doc["pages"][0], files["a"].words)

    rc, out, err = recognize(quire_bin, stack, files["dir"] / "turned.png", "--auto-orientation")
    assert rc == 0, err
    page = validate_result(json.loads(out))["pages"][0]
    assert page["rotation"] == 90
    assert_words(page, files["turned"].words)

    rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", "--languages", "tlh")
    assert rc == 1 and "unknown_language" in err and "a.png" in err, err


def test_cli_usage_errors(quire_bin, stack, files):
    for args in (["--format", "xml"], ["--mode", "x"], ["--pages", "0"]):
        rc, out, err = recognize(quire_bin, stack, files["dir"] / "a.png", *args)
        assert rc == 2 and out == "" and err, (args, rc, err)


# ---------------------------------------------------------------------------
# quire up: broker and OCR workers in one process
# ---------------------------------------------------------------------------

def test_quire_up(quire_bin, zctx, tmp_path, files):
    st = start_stack(zctx, tmp_path, [[quire_bin, "up", "--bind", "{url}", "--threads", "2"]])
    try:
        doc = ocr(st, {}, (files["dir"] / "b.jpg").read_bytes())
        assert_words(doc["pages"][0], files["b"].words)
        rc, out, err = recognize(quire_bin, st, files["dir"] / "a.png", "--format", "text")
        assert rc == 0 and out.split() == ["Alpha", "file", "one"], err
        ocr_error(st, [b"{}", _random_bytes()], "not_an_image")
    finally:
        rc = st.processes[0].stop()
    assert rc == 0, "quire up exited %s on SIGTERM:\n%s" % (rc, st.processes[0].tail())


# ---------------------------------------------------------------------------
# Degraded pages read like the same page clean and upright (issue 11): skew, quarter turns, a
# 72 dpi two-column scan, uneven light. CER against the page's text in reading order.
# ---------------------------------------------------------------------------

DEGRADED_PAGE = oi.document_page(seed=4, width=1400, height=1500, size=30)
DEGRADED_TRUTH = "\n".join(DEGRADED_PAGE.lines)


@pytest.fixture(scope="module")
def clean_cer(stack):
    doc = ocr(stack, {}, oi.png(DEGRADED_PAGE.image, dpi=(200, 200)))
    value = oi.cer(DEGRADED_TRUTH, doc["text"])
    assert value < 0.02, "the clean page itself reads badly: CER %.3f" % value
    return value


DEGRADATIONS = {
    "skew+5": lambda im: oi.png(oi.skewed(im, 5)),
    "skew-12": lambda im: oi.png(oi.skewed(im, -12)),
    "skew+15": lambda im: oi.png(oi.skewed(im, 15)),
    "turned-90": lambda im: oi.png(im.rotate(90, expand=True)),
    "turned-180": lambda im: oi.png(im.rotate(180, expand=True)),
    "turned-270": lambda im: oi.png(im.rotate(270, expand=True)),
    "72dpi": lambda im: oi.png(oi.low_resolution(im, 72), dpi=(72, 72)),
    "uneven-light": lambda im: oi.png(oi.uneven_light(im)),
}


@pytest.mark.parametrize("kind", list(DEGRADATIONS))
def test_degraded_page_reads_like_the_clean_one(stack, clean_cer, kind):
    doc = ocr(stack, {}, DEGRADATIONS[kind](DEGRADED_PAGE.image))
    (page,) = doc["pages"]
    value = oi.cer(DEGRADED_TRUTH, doc["text"])
    assert value <= clean_cer + 0.01, "%s: CER %.3f against %.3f clean" % (kind, value, clean_cer)
    steps = {s["step"]: s for s in doc["metadata"]["steps"]}
    if kind.startswith("skew"):
        angle = float(kind[4:])
        assert steps["deskew"]["applied"], steps["deskew"]
        # PIL turned the page counter-clockwise: Quire turned it back clockwise by about as much.
        assert abs(page["deskewAngle"] - angle) < 0.5, page["deskewAngle"]
    if kind.startswith("turned"):
        assert page["rotation"] == int(kind[7:]), page["rotation"]
        assert steps["orientation"]["applied"], steps["orientation"]
    if kind == "72dpi":
        assert page["recognitionScale"] > 2, page["recognitionScale"]
    if kind == "uneven-light":
        assert steps["light"]["applied"], steps["light"]
    # Coordinates stay those of the upright uploaded page.
    assert_geometry_consistent(page)


# ---------------------------------------------------------------------------
# Reading order of mixed layouts (issue 23): a head across the page, two columns, a foot across
# again; each column's lines stay together and in order, a figure beside prose is not read as text.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("figure", [False, True], ids=["two-columns", "figure-beside-prose"])
def test_mixed_layout_reads_in_order(stack, figure):
    drawn = oi.mixed_layout_page(figure=figure)
    doc = ocr(stack, {}, oi.png(drawn.image, dpi=(200, 200)))
    truth = "\n".join(drawn.lines)
    value = oi.cer(truth, doc["text"])
    assert value < 0.02, "CER %.3f:\n%s" % (value, doc["text"][:2000])
    steps = {s["step"]: s for s in doc["metadata"]["steps"]}
    layout = steps["layout"]["parameters"]
    # The columns are found side by side as regions, or (the figure's frame standing as a long
    # vertical rule: which one depends on the scale the page is read at) the page is cut at the rule
    # into the part above, the columns and the part below.
    assert layout["singleBlock"] == 0, layout
    assert layout["columnPairs"] >= 1 or (figure and layout.get("ruledPieces", 0) >= 3), layout
    # Each text line of the result lies on one side of the gutter or spans the page: no line runs
    # from the left column (or the figure) into the right one.
    (page,) = doc["pages"]
    gutter = drawn.image.width // 2
    for block in page["blocks"]:
        for paragraph in block["paragraphs"]:
            for line in paragraph["lines"]:
                box = line["boundingBox"]
                if box["y"] > drawn.words[0].box[3] + 300 and box["y"] < drawn.image.height * 0.7:
                    assert box["x"] + box["width"] < gutter + 40 or box["x"] > gutter - 40, line["text"]


def test_a_form_ruled_into_columns_reads_column_by_column_with_its_rows(stack):
    """A results bulletin ruled into four columns, counts flush against the rules: Tesseract's own
    analysis reads it out of order (51 % CER for the CLI and for Quire before the rules cut it); cut at
    its long rules, each column is read in turn, each entry a row: name, party, count."""
    drawn = oi.ruled_form_page()
    doc = ocr(stack, {}, oi.png(drawn.image, dpi=(200, 200)))
    truth = "\n".join(drawn.lines)
    value = oi.cer(truth, doc["text"])
    assert value < 0.02, "CER %.3f:\n%s" % (value, doc["text"][:2000])
    layout = {s["step"]: s for s in doc["metadata"]["steps"]}["layout"]["parameters"]
    # The head and the four columns (the frame at the paper's edges cuts nothing, nothing is written
    # below it).
    assert layout["ruledPieces"] == 5 and layout["singleBlock"] == 0, layout
    # The words' boxes are those of the page, not of the pieces they were read from.
    (page,) = doc["pages"]
    assert_words(page, drawn.words, tol=6)


def test_one_column_with_amounts_reads_as_one_block(stack):
    rows = ["Nasi Lemak Ayam        12.50", "Teh Tarik               4.20", "Roti Canai              2.40",
            "Mee Goreng Mamak        9.90", "Air Limau Ais           3.50", "Total                  32.50"]
    drawn = oi.render_lines(rows, "mono", 36)
    doc = ocr(stack, {}, oi.png(drawn.image))
    steps = {s["step"]: s for s in doc["metadata"]["steps"]}
    assert steps["layout"]["parameters"]["singleBlock"] == 1, steps["layout"]
    # Read as one block, each item stays on the line of its price.
    lines = [" ".join(l.split()) for l in doc["text"].splitlines() if l.strip()]
    assert "Total 32.50" in lines, lines
    assert "Teh Tarik 4.20" in lines, lines


def test_skewed_words_are_mapped_back_to_the_uploaded_pixels(stack):
    drawn = oi.rotate(oi.render_lines(["Invoice number 4711 paid", "Total amount due today"], "sans", 40), 8)
    doc = ocr(stack, {}, oi.png(drawn.image))
    (page,) = doc["pages"]
    assert abs(page["deskewAngle"] - 8) < 0.5
    assert_words(page, drawn.words, tol=10)


def test_orientation_check_can_be_turned_off(stack):
    data = oi.png(DEGRADED_PAGE.image.rotate(180, expand=True))
    page = ocr(stack, {"autoOrientation": False}, data)["pages"][0]
    assert page["rotation"] == 0


def test_symbols_can_be_left_out(stack):
    drawn = oi.render_lines(["Symbols cost time"], "sans", 40)
    page = ocr(stack, {"symbols": False}, oi.png(drawn.image))["pages"][0]
    assert_words(page, drawn.words)
    assert all(w["symbols"] == [] for w in page_words(page))


def test_noise_words_from_rules_are_dropped(stack):
    # A receipt-like block with dotted and solid rules between the lines.
    drawn = oi.render_lines(["TOTAL 12.50", "CASH 20.00", "CHANGE 7.50"], "mono", 36, line_gap=1.4)
    img = drawn.image.copy()
    d = ImageDraw.Draw(img)
    for y in (97, 183):  # midway between the text lines
        for x in range(10, img.width - 10, 14):
            d.line([(x, y), (x + 7, y)], fill=0, width=3)
    doc = ocr(stack, {}, oi.png(img))
    page = doc["pages"][0]
    texts = [w["text"] for w in page_words(page)]
    assert all(any(ch.isalnum() for ch in t) for t in texts), texts
    assert_words(page, drawn.words)


def test_a_bracket_pair_read_as_two_kinds_becomes_round_and_the_spaces_step_reports_both_rules(stack):
    """A receipt line whose word reads as `Tax($}` comes back as `Tax($)` (`brackets` step, words and
    text), matching pairs stay; the `spaces` step reports its monospace and its case-change rule."""
    receipt = ["Amount Tax($} 12.50", "Total (RM) 33.90", "Cash 50.00"]
    doc = ocr(stack, {}, oi.png(oi.render_lines(receipt, "mono", 36).image))
    (step,) = [s for s in doc["metadata"]["steps"] if s["step"] == "brackets"]
    assert step["applied"] and step["parameters"] == {"wordsChanged": 1}, (step, doc["text"])
    words = [w["text"] for b in doc["pages"][0]["blocks"] for p in b["paragraphs"] for ln in p["lines"] for w in ln["words"]]
    assert "Tax($)" in words and "(RM)" in words, words
    assert "Tax($)" in doc["text"] and "}" not in doc["text"], doc["text"]
    (spaces,) = [s for s in doc["metadata"]["steps"] if s["step"] == "spaces"]
    assert {"wordsSplit", "monospacedLines", "minCells", "caseSplits", "minCaseGap"} <= spaces["parameters"].keys(), spaces
    # Without the symbol level neither spaces rule can run; brackets need none.
    doc = ocr(stack, {"symbols": False}, oi.png(oi.render_lines(receipt, "mono", 36).image))
    steps = [s["step"] for s in doc["metadata"]["steps"]]
    assert "spaces" not in steps and "brackets" in steps, steps


def test_a_receipts_fields_are_in_the_schema_valid_result(stack):
    """`fields: ["receipt"]` through the real engine: the page's documents and its `fields` step
    validate against the result schema, and the fields are the receipt's."""
    lines = ["CORNER CAFE SDN BHD", "12, JALAN SS 2/24,", "47300 PETALING JAYA", "DATE: 23/03/2018 14:32",
             "NASI LEMAK 2 7.50 15.00", "SUBTOTAL 15.00", "GST 0.90", "TOTAL 15.90", "CASH 20.00", "CHANGE 4.10"]
    drawn = oi.render_lines(lines, "mono", 30)
    doc = ocr(stack, {"fields": ["receipt"], "languages": ["eng"]}, oi.png(drawn.image))
    (page,) = doc["pages"]
    (receipt,) = page["documents"]
    fields = receipt["fields"]
    assert receipt["kind"] == "receipt"
    assert fields["Total"]["valueCurrency"]["amount"] == 15.90 and fields["Total"]["type"] == "currency"
    assert fields["TransactionDate"]["valueDate"] == "2018-03-23"
    assert fields["TransactionTime"]["valueTime"] == "14:32:00"
    assert fields["MerchantName"]["valueString"] == "CORNER CAFE SDN BHD"
    assert fields["MerchantAddress"]["valueAddress"]["postalCode"] == "47300"
    step = next(s for s in doc["metadata"]["steps"] if s["step"] == "fields")
    assert step["applied"] and step["parameters"]["total.agreeing"] >= 1
    # Without fields, no documents and no step.
    plain = ocr(stack, {"languages": ["eng"]}, oi.png(drawn.image))
    assert "documents" not in plain["pages"][0]
    assert not any(s["step"] == "fields" for s in plain["metadata"]["steps"])
