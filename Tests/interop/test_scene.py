"""End-to-end tests of the scene engine (PP-OCR through ONNX Runtime) and of `engine: auto`.

Real processes: `quire broker` + `quire worker ocr` with the scene models scripts/install-onnxruntime
installs, and a second worker pointed at a folder without them (the fallback). Pictures are drawn
here: a sign on a brick wall, tilted, which Tesseract reads as nothing; a picture without text; a page.
Every result is validated against proto-json/ocr-result.schema.json, every error against error.schema.json.
"""

import io
import json
import math
import random
import subprocess
import time

import pytest
from PIL import Image, ImageDraw, ImageFilter

import ocr_images as oi
from conftest import Proc, wait_service
from test_ocr import (SERVICE, _env, add_client, ocr, ocr_error, page_lines, page_words, quire_bin, request_frame, start_stack,  # noqa: F401
                      zctx)

SCENE_MODELS = "/opt/quire-onnxruntime/models"


def scene_stack(quire_bin, zctx, log_dir, workers):
    """A broker and OCR workers, each given as (extra arguments, scene models folder); yields the stack
    once every service they serve is registered, and stops it after."""
    st = start_stack(zctx, log_dir, [[quire_bin, "broker", "--bind", "{url}", "--stats", "off", "--data", str(log_dir / "data")]]
                     + [[quire_bin, "worker", "ocr"] + extra + ["--broker", "{url}", "--threads", "1", "--scene-models", models]
                        for extra, models in workers])
    deadline = time.monotonic() + 20
    for extra, _ in workers:
        service = extra[extra.index("--service") + 1].encode() if "--service" in extra else b"ocr"
        while st.call(b"mmi.service", [service]) != [b"200"]:
            assert time.monotonic() < deadline, "%s not registered\n%s" % (service, st.logs())
            time.sleep(0.05)
    yield st
    for p in reversed(st.processes):
        p.stop()


@pytest.fixture(scope="module")
def stack(quire_bin, zctx, tmp_path_factory):
    yield from scene_stack(quire_bin, zctx, tmp_path_factory.mktemp("scene-stack"), [([], SCENE_MODELS)])


@pytest.fixture(scope="module")
def bare_stack(quire_bin, zctx, tmp_path_factory):
    """A worker whose scene models are missing: it serves Tesseract alone."""
    log_dir = tmp_path_factory.mktemp("scene-bare-stack")
    yield from scene_stack(quire_bin, zctx, log_dir, [([], str(log_dir / "no-models"))])


@pytest.fixture(scope="module")
def split_stack(quire_bin, zctx, tmp_path_factory):
    """Photo workers apart: the `ocr` worker has no scene models; an `ocr.scene` worker has them."""
    log_dir = tmp_path_factory.mktemp("scene-split-stack")
    yield from scene_stack(quire_bin, zctx, log_dir, [([], str(log_dir / "no-models")), (["--service", "ocr.scene"], SCENE_MODELS)])


SIGN_LINES = ["OPEN", "DAILY"]
TILT = 7  # degrees, counter-clockwise


def sign_picture():
    """A dark board with two white words, tilted, on a brick wall; returns the picture and the
    centre of each word in it."""
    rnd = random.Random(3)
    w, h = 900, 600
    img = Image.new("RGB", (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            v = rnd.randint(-18, 18)
            mortar = y % 60 < 5 or (x + (30 if (y // 60) % 2 else 0)) % 120 < 5
            px[x, y] = (190, 185, 175) if mortar else (150 + v, 70 + v // 2, 50 + v // 3)
    bw, bh = 620, 300
    board = Image.new("RGBA", (bw, bh), (20, 60, 40, 255))
    draw = ImageDraw.Draw(board)
    f = oi.font("bold", 84)
    centres = []
    y = 40
    for line in SIGN_LINES:
        tw = draw.textlength(line, font=f)
        x0, y0, x1, y1 = draw.textbbox(((bw - tw) / 2, y), line, font=f)
        draw.text(((bw - tw) / 2, y), line, font=f, fill=(240, 235, 220, 255))
        centres.append(((x0 + x1) / 2, (y0 + y1) / 2))
        y += 110
    turned = board.rotate(TILT, expand=True, resample=Image.BICUBIC)
    ox, oy = (w - turned.width) // 2, (h - turned.height) // 2
    img.paste(turned, (ox, oy), turned)
    # Where the word centres went: turned about the board's centre, counter-clockwise on screen.
    a = math.radians(TILT)
    placed = []
    for cx, cy in centres:
        dx, dy = cx - bw / 2, cy - bh / 2
        placed.append((ox + turned.width / 2 + dx * math.cos(a) + dy * math.sin(a),
                       oy + turned.height / 2 - dx * math.sin(a) + dy * math.cos(a)))
    return img.filter(ImageFilter.GaussianBlur(0.8)), placed


def textless_picture():
    rnd = random.Random(5)
    img = Image.new("RGB", (800, 600), (120, 160, 200))
    d = ImageDraw.Draw(img)
    for _ in range(40):
        x, y, r = rnd.randint(0, 800), rnd.randint(0, 600), rnd.randint(10, 80)
        d.ellipse((x - r, y - r, x + r, y + r), fill=(rnd.randint(0, 255), rnd.randint(0, 255), rnd.randint(0, 255)))
    return img.filter(ImageFilter.GaussianBlur(1.5))


def inside(polygon, point):
    """Whether `point` lies inside the convex polygon (clockwise on screen)."""
    x, y = point
    signs = []
    for i in range(len(polygon)):
        (x0, y0), (x1, y1) = (polygon[i]["x"], polygon[i]["y"]), (polygon[(i + 1) % len(polygon)]["x"], polygon[(i + 1) % len(polygon)]["y"])
        signs.append((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0) >= 0)
    return all(signs) or not any(signs)


def engine_step(result):
    steps = [s for s in result["metadata"]["steps"] if s["step"] == "engine"]
    assert len(steps) <= 1, steps
    return steps[0] if steps else None


@pytest.fixture(scope="module")
def sign():
    return sign_picture()


def test_tesseract_alone_reads_nothing_on_the_sign(stack, sign):
    img, _ = sign
    r = ocr(stack, {"engine": "tesseract"}, oi.png(img))
    assert r["text"].strip() == "", "the sign is meant to be a picture Tesseract cannot read: %r" % r["text"]
    assert r["metadata"]["engine"].startswith("tesseract")
    assert engine_step(r) is None


def test_scene_engine_reads_the_tilted_sign_word_by_word_where_it_stands(stack, sign):
    img, centres = sign
    r = ocr(stack, {"engine": "scene", "languages": ["en"]}, oi.png(img))
    assert r["text"] == "OPEN\nDAILY\n"
    assert r["metadata"]["engine"].startswith("pp-ocr PP-OCRv6") and ", onnxruntime 1." in r["metadata"]["engine"]
    (page,) = r["pages"]
    assert (page["width"], page["height"]) == img.size
    words = page_words(page)
    assert [w["text"] for w in words] == SIGN_LINES
    for word, centre in zip(words, centres):
        assert inside(word["polygon"], centre), (word["text"], word["polygon"], centre)
        # The polygon leans with the board: its top edge rises to the right by about the tilt.
        p = word["polygon"]
        angle = math.degrees(math.atan2(p[0]["y"] - p[1]["y"], p[1]["x"] - p[0]["x"]))
        assert abs(angle - TILT) < 3, (word["text"], angle)
        assert word["languages"] == ["en"] and 0.8 < word["confidence"] <= 1
        assert "".join(s["text"] for s in word["symbols"]) == word["text"]
        for s in word["symbols"]:
            assert inside(p, ((s["polygon"][0]["x"] + s["polygon"][2]["x"]) / 2, (s["polygon"][0]["y"] + s["polygon"][2]["y"]) / 2))
    lines = page_lines(page)
    assert [ln["text"] for ln in lines] == SIGN_LINES
    assert all(ln["baseline"] for ln in lines)


def test_auto_chooses_the_scene_engine_for_the_sign_and_says_why(stack, sign):
    img, _ = sign
    for options in ({}, {"engine": "auto"}, {"mode": "text"}):
        r = ocr(stack, options, oi.png(img))
        assert r["text"] == "OPEN\nDAILY\n", options
        step = engine_step(r)
        assert step and step["applied"] is True, r["metadata"]["steps"]
        p = step["parameters"]
        assert p["confidentWords"] < p["minConfidentWords"] and p["sceneConfidence"] >= p["confidence"] + p["minGain"]
        assert p["sceneLines"] == 2
        assert r["metadata"]["engine"].startswith("pp-ocr")


def test_auto_keeps_tesseract_for_a_page(stack):
    page = oi.document_page(seed=2, columns=1, width=1200, height=900, size=30)
    r = ocr(stack, {}, oi.png(page.image))
    assert r["metadata"]["engine"].startswith("tesseract")
    assert engine_step(r) is None, "a page read confidently is not shown to the scene engine"
    assert oi.cer("\n".join(page.lines), r["text"]) < 0.02


def test_no_text_gives_an_empty_result(stack):
    png = oi.png(textless_picture())
    for engine in ("auto", "scene"):
        r = ocr(stack, {"engine": engine}, png)
        assert r["text"].strip() == "", (engine, r["text"])
        assert page_words(r["pages"][0]) == []


def test_scene_engine_refuses_languages_its_models_do_not_read(stack, sign):
    img, _ = sign
    e = ocr_error(stack, [request_frame({"engine": "scene", "languages": ["ko"]}), oi.png(img)], "unknown_language")
    assert "scene engine" in e["message"] and "kor" in e["message"]
    # auto reads Korean with Tesseract, never with the scene engine
    r = ocr(stack, {"languages": ["ko"]}, oi.png(img))
    assert r["metadata"]["engine"].startswith("tesseract") and engine_step(r) is None


def test_an_unknown_engine_is_a_bad_request(stack, sign):
    img, _ = sign
    e = ocr_error(stack, [b'{"engine":"paddle"}', oi.png(img)], "bad_request")
    assert e["message"] == "'engine' must be one of auto, tesseract, scene"


def test_a_worker_without_the_models_reads_with_tesseract_and_says_so(bare_stack, sign):
    img, _ = sign
    log = bare_stack.processes[1].tail(100)
    assert '"msg":"engines"' in log and "off, no det.onnx or rec.onnx in " in log, log
    r = ocr(bare_stack, {}, oi.png(img))
    assert r["metadata"]["engine"].startswith("tesseract")
    step = engine_step(r)
    assert step and step["applied"] is False and step["parameters"]["sceneAvailable"] == 0
    # No worker reads photos for it either (no ocr.scene at its broker): the request fails with both reasons.
    e = ocr_error(bare_stack, [request_frame({"engine": "scene"}), oi.png(img)], "engine_failure")
    assert "no det.onnx or rec.onnx in " in e["message"] and "no ocr.scene worker" in e["message"], e["message"]
    # and goes on serving
    page = oi.render_lines(["still serving pages"], size=40)
    assert ocr(bare_stack, {"engine": "tesseract"}, oi.png(page.image))["text"].strip() == "still serving pages"


def test_an_ocr_worker_without_the_models_hands_photos_to_the_ocr_scene_workers_and_reads_pages_itself(split_stack, sign):
    img, centres = sign
    # `auto`: Tesseract reads nothing worth keeping here, so the photo goes to ocr.scene, which reads
    # it as a worker with both engines does, and says so in its engine step.
    r = ocr(split_stack, {}, oi.png(img))
    assert r["metadata"]["engine"].startswith("pp-ocr"), r["metadata"]
    assert r["text"] == "OPEN\nDAILY\n"
    step = engine_step(r)
    assert step and step["applied"] is True and step["parameters"]["sceneConfidence"] > step["parameters"]["confidence"]
    words = page_words(r["pages"][0])
    assert all(inside(w["polygon"], c) for w, c in zip(words, centres))
    # `scene`: handed on at once.
    r = ocr(split_stack, {"engine": "scene"}, oi.png(img))
    assert r["metadata"]["engine"].startswith("pp-ocr") and r["text"] == "OPEN\nDAILY\n"
    # A page stays with the page worker.
    page = oi.render_lines(["pages stay here"], size=40)
    r = ocr(split_stack, {}, oi.png(page.image))
    assert r["metadata"]["engine"].startswith("tesseract") and r["text"].strip() == "pages stay here" and engine_step(r) is None
    # The only worker of ocr has no scene engine: pp-ocr's readings above came from ocr.scene.
    assert "off, no det.onnx or rec.onnx in " in split_stack.processes[1].tail(100)


def test_with_auth_on_the_hand_off_presents_the_workers_own_credentials(quire_bin, zctx, tmp_path, sign):
    """Auth on: the page worker asks ocr.scene as a client of its own. Without credentials it says so
    for `scene` (not as the caller's missing token) and keeps Tesseract's reading for `auto`."""
    data = tmp_path / "tokens"

    app, pages = add_client(quire_bin, data, "app"), add_client(quire_bin, data, "pages")
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--data", str(tmp_path / "jobs"), "--stats", "off", "--auth", "on"],
        [quire_bin, "worker", "token", "--broker", "{url}", "--data", str(data)],
        [quire_bin, "worker", "ocr", "--service", "ocr.scene", "--broker", "{url}", "--threads", "1", "--scene-models", SCENE_MODELS],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--scene-models", str(tmp_path / "no-models"),
         "--data", str(tmp_path / "none")],
    ])
    try:
        picture = tmp_path / "sign.png"
        picture.write_bytes(oi.png(sign[0]))
        env = dict(_env(), QUIRE_CLIENT_ID=app["client_id"], QUIRE_CLIENT_SECRET=app["client_secret"])

        def call(options):
            p = subprocess.run([quire_bin, "call", "ocr", json.dumps(options), "@" + str(picture), "--broker", st.url],
                               capture_output=True, timeout=120, env=env)
            return p.returncode, p.stdout.decode().strip().splitlines(), p.stderr.decode().strip().splitlines()

        code, _, err = call({"engine": "scene"})
        assert code == 1, err
        error = json.loads(err[-1])["error"]
        assert error["code"] == "engine_failure" and "QUIRE_CLIENT_ID" in error["message"], error
        code, out, err = call({})
        assert code == 0 and json.loads(out[-1])["metadata"]["engine"].startswith("tesseract"), err
        # The same page worker with a client of its own.
        st.processes[-1].stop()
        own = Proc([quire_bin, "worker", "ocr", "--broker", st.url, "--threads", "1", "--scene-models", str(tmp_path / "no-models")],
                   tmp_path / "ocr-with-client.log", env=dict(_env(), QUIRE_CLIENT_ID=pages["client_id"], QUIRE_CLIENT_SECRET=pages["client_secret"]))
        st.processes.append(own)
        wait_service(zctx, st.url, b"ocr")
        for options in ({"engine": "scene"}, {}):
            code, out, err = call(options)
            assert code == 0, err
            result = json.loads(out[-1])
            assert result["metadata"]["engine"].startswith("pp-ocr") and result["text"] == "OPEN\nDAILY\n", (options, result["metadata"])
    finally:
        for proc in reversed(st.processes):
            proc.stop()


def test_an_ocr_scene_worker_needs_the_scene_engine_and_an_ocr_worker_serves_ocr_or_ocr_scene(quire_bin, tmp_path):
    for argv, reason in ((["--service", "ocr.scene", "--scene-models", str(tmp_path)], "scene engine"),
                         (["--service", "ocr.photos"], "ocr or ocr.scene")):
        result = subprocess.run([quire_bin, "worker", "ocr", "--broker", "tcp://127.0.0.1:1"] + argv, capture_output=True, text=True, timeout=30)
        assert result.returncode == 2 and reason in result.stderr, (argv, result.returncode, result.stderr)


def test_auto_keeps_tesseract_for_a_page_with_one_smeared_line(stack):
    # Four of five words read well: a page Tesseract can read. The scene engine would drop the smeared
    # line and seem more confident by reading less.
    d = oi.render_lines(["Clear words then", "gibberish", "end"], size=40)
    img = d.image.copy()
    box = (0, int(img.height * 0.38), img.width, int(img.height * 0.62))
    img.paste(img.crop(box).filter(ImageFilter.GaussianBlur(4.5)), box)
    img = img.point(lambda v: 30 + v * 215 // 255)  # a scan's tones: the smear darkens into guesses
    r = ocr(stack, {}, oi.png(img))
    assert r["metadata"]["engine"].startswith("tesseract") and engine_step(r) is None
    words = [w["text"] for w in page_words(r["pages"][0])]
    assert words[:3] == ["Clear", "words", "then"] and words[-1] == "end" and len(words) == 5, words


@pytest.fixture(scope="module")
def gateway(quire_bin, zctx, tmp_path_factory):
    from test_gateway import gateway_stack
    yield from gateway_stack(quire_bin, zctx, tmp_path_factory.mktemp("scene-gateway"), worker_threads=1)


@pytest.mark.parametrize("feature", ["TEXT_DETECTION", "DOCUMENT_TEXT_DETECTION"])
def test_cloud_vision_through_the_gateway_reads_the_sign_with_leaning_boxes(gateway, sign, feature):
    # Google's own client, both features: the worker's default engine (auto) picks the scene engine.
    from google.cloud import vision
    from test_gateway import vision_client
    img, centres = sign
    request = vision.AnnotateImageRequest(image=vision.Image(content=oi.png(img)),
                                          features=[vision.Feature(type_=vision.Feature.Type[feature])])
    (r,) = vision_client(gateway).batch_annotate_images(requests=[request]).responses
    assert not r.error.message
    assert r.text_annotations[0].description == "OPEN\nDAILY\n"
    assert [a.description for a in r.text_annotations[1:]] == SIGN_LINES
    for annotation, centre in zip(r.text_annotations[1:], centres):
        polygon = [{"x": v.x, "y": v.y} for v in annotation.bounding_poly.vertices]
        assert inside(polygon, centre), (annotation.description, polygon, centre)
        assert polygon[1]["y"] < polygon[0]["y"] - 5, "the box leans with the board"


def test_a_scanned_pdf_page_goes_to_the_scene_engine_too(stack, sign):
    # A PDF whose page is the sign's picture: rendered, then read as the picture is.
    img, _ = sign
    buf = io.BytesIO()
    img.save(buf, format="PDF", resolution=150)
    for options in ({"engine": "scene"}, {}):
        r = ocr(stack, options, buf.getvalue())
        assert r["metadata"]["format"] == "pdf" and r["metadata"]["engine"].startswith("pp-ocr"), (options, r["metadata"])
        assert r["text"] == "OPEN\nDAILY\n", options
        (page,) = r["pages"]
        assert [w["text"] for w in page_words(page)] == SIGN_LINES
