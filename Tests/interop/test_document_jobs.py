"""Documents as durable jobs: `ocr.document` splits a PDF into one `ocr` job per page, every OCR worker
reads pages, and the document comes back whole, in page order, every page once.

Real processes: `quire broker --data` with its stats socket, two `quire worker ocr` processes (each an
OCR connection and an `ocr.document` connection), the `quire` CLI. The 60-page PDF is rendered here
with Pillow (each page a picture, as a scanner makes them). One worker is SIGKILLed while the document
is being read: whichever of them was splitting the document, its pages are all still read once.

Needs: PDFium (scripts/install-pdfium), PyPI pillow and pyzmq.
"""

import json
import os
import signal
import subprocess
import time

import pytest
import zmq

import ocr_images as oi
import test_pdf_input as tp
from conftest import Proc, free_port, wait_service
from test_ocr import _env, _validate, add_client, _validator, page_lines, quire_bin, start_stack, validate_result, zctx  # noqa: F401
from test_pdf_input import scanned
from test_titanic import SCHEMAS, status_validator

# What these tests see on the wire is checked against proto-json: every progress report and status.
PROGRESS = _validator("job-progress.schema.json")
STATUS = status_validator()

PAGES = 60


FILLER = ["Every page of this document is a job", "of its own, read by any OCR worker", "and put back in page order again",
          "when the last of them is done"]


def words_of(n):
    return ["Document page %d" % n, "read once by one worker"] + FILLER


def run(quire_bin, *args, timeout=120):
    p = subprocess.run([quire_bin, *args], capture_output=True, timeout=timeout, env=_env())
    return p


def status(quire_bin, url, job):
    p = run(quire_bin, "status", job, "--broker", url)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    _validate(STATUS, doc, "titanic.status")
    return doc


def snapshot_workers(stats_url, ctx, service):
    """pid → (state, requests served as the worker reports them) of each connection for `service`, from
    one stats snapshot."""
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.setsockopt(zmq.LINGER, 0)
    sub.connect(stats_url)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not sub.poll(1000):
                continue
            frames = sub.recv_multipart()
            try:
                snapshot = json.loads(frames[-1])
            except ValueError:
                continue
            if "workers" not in snapshot:
                continue
            return {w["report"]["pid"]: (w["state"], w["report"]["jobsDone"]) for w in snapshot["workers"]
                    if w["service"] == service and w.get("report")}
        raise AssertionError("no stats snapshot within 10 s")
    finally:
        sub.close()


@pytest.mark.timeout_s(420)
def test_a_60_page_pdf_is_read_by_both_workers_and_survives_one_being_killed(quire_bin, zctx, tmp_path):
    stats = "tcp://127.0.0.1:%d" % free_port()
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--data", str(tmp_path / "jobs"), "--stats", stats, "--stats-interval-ms", "250",
         "--heartbeat-interval-ms", "250"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--documents", "1", "--heartbeat-interval-ms", "250"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--documents", "1", "--heartbeat-interval-ms", "250"],
    ])
    try:
        drawings = [oi.render_lines(words_of(n), "sans", 40) for n in range(1, PAGES + 1)]
        doc = tmp_path / "sixty.pdf"
        doc.write_bytes(scanned(drawings, dpi=150))
        p = run(quire_bin, "submit", str(doc), "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        job = p.stdout.decode().strip()

        # Progress shows while it runs: pages done of pages total.
        seen = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            s = status(quire_bin, st.url, job)
            assert s["service"] == "ocr.document"
            if s.get("progress"):
                assert s["progress"]["total"] == PAGES
                seen.append(s["progress"]["done"])
                if s["progress"]["done"] >= 10:
                    break
            assert s["state"] in ("queued", "running"), s
            time.sleep(0.2)
        assert seen and seen[-1] >= 10, "no progress past 10 pages: %s" % seen
        assert seen == sorted(seen), seen

        # Both workers have read pages; then the one splitting the document dies, mid-document: the
        # other takes the document up again and gets the pages already read back from their jobs.
        served = snapshot_workers(stats, zctx, "ocr")
        pids = [proc.p.pid for proc in st.processes[1:]]
        assert all(served.get(pid, ("", 0))[1] >= 1 for pid in pids), "each worker read pages: %s (pids %s)" % (served, pids)
        splitting = [pid for pid, (state, _) in snapshot_workers(stats, zctx, "ocr.document").items() if state == "busy"]
        assert len(splitting) == 1, splitting
        before = status(quire_bin, st.url, job)
        assert before["state"] == "running" and before["progress"]["done"] < PAGES, before
        os.kill(splitting[0], signal.SIGKILL)

        p = run(quire_bin, "result", job, "--wait", "--broker", st.url, timeout=300)
        assert p.returncode == 0, p.stderr.decode()
        result = validate_result(json.loads(p.stdout))
        assert result["metadata"]["pageCount"] == PAGES
        assert [page["pageNumber"] for page in result["pages"]] == list(range(1, PAGES + 1))
        for page, drawing in zip(result["pages"], drawings):
            assert "error" not in page, page.get("error")
            assert [ln["text"] for ln in page_lines(page)] == drawing.lines
        assert result["text"] == "\f".join(page["text"] for page in result["pages"])
        after = status(quire_bin, st.url, job)
        assert after["state"] == "done" and after["attempts"] == 2, after
    finally:
        for proc in reversed(st.processes):
            proc.stop()


def test_a_document_request_answers_typed_errors_and_reads_images_too(quire_bin, zctx, tmp_path):
    """`ocr.document` asked directly: a selection past the last page is refused in the protocol's
    words; an image (not a PDF) is one page job, read as `ocr` reads it; a searchable PDF of a document
    is made from its page jobs, through `quire recognize` and as a durable job."""
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--data", str(tmp_path / "jobs"), "--stats", "off"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--documents", "1"],
    ])
    try:
        drawings = [oi.render_lines(words_of(n), "sans", 28) for n in range(1, 4)]
        doc = tmp_path / "three.pdf"
        doc.write_bytes(scanned(drawings))

        def call(frame, path):
            p = run(quire_bin, "call", "ocr.document", frame, "@" + str(path), "--broker", st.url)
            assert p.returncode == 0, p.stderr.decode()
            return [line for line in p.stdout.decode().splitlines() if not line.startswith("partial: ")], p.stdout.decode()

        def refused(frame, path):
            p = run(quire_bin, "call", "ocr.document", frame, "@" + str(path), "--broker", st.url)
            assert p.returncode == 1, p
            return json.loads(p.stderr.decode().strip().splitlines()[-1])["error"]

        assert refused('{"pages":[5]}', doc)["code"] == "bad_request"
        lines, out = call('{"pages":[3,1]}', doc)
        result = validate_result(json.loads(lines[-1]))
        assert [page["pageNumber"] for page in result["pages"]] == [3, 1]
        assert [ln["text"] for ln in page_lines(result["pages"][0])] == drawings[2].lines
        reports = [json.loads(line[len("partial: "):]) for line in out.splitlines() if line.startswith("partial: ")]
        for report in reports:
            _validate(PROGRESS, report, "a progress report")
        assert [r["progress"]["done"] for r in reports] == [0, 1, 2] and {r["progress"]["total"] for r in reports} == {2}, reports
        png = tmp_path / "one.png"
        drawings[0].image.save(png)
        lines, _ = call("{}", png)
        assert [ln["text"] for ln in page_lines(validate_result(json.loads(lines[-1]))["pages"][0])] == drawings[0].lines

        def pdftotext(data):
            path = tmp_path / "out.pdf"
            path.write_bytes(data)
            check = subprocess.run(["qpdf", "--check", str(path)], capture_output=True)
            assert check.returncode == 0, check.stdout.decode()
            return [page.split() for page in subprocess.run(["pdftotext", str(path), "-"], capture_output=True).stdout.decode().split("\f")[:3]]

        expected = [" ".join(d.lines).split() for d in drawings]
        p = run(quire_bin, "recognize", str(doc), "--format", "pdf", "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        assert pdftotext(p.stdout) == expected
        p = run(quire_bin, "submit", str(doc), "--format", "pdf", "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        job = p.stdout.decode().strip()
        assert status(quire_bin, st.url, job)["service"] == "ocr.document"
        p = run(quire_bin, "result", job, "--wait", "--format", "pdf", "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        assert pdftotext(p.stdout) == expected

        # A multi-page TIFF: its pages as PNG page jobs, the result the TIFF's, its searchable PDF too.
        tiff = tmp_path / "three.tiff"
        drawings[0].image.convert("L").save(tiff, save_all=True, append_images=[d.image.convert("L") for d in drawings[1:]],
                                           compression="tiff_lzw", dpi=(150, 150))
        p = run(quire_bin, "submit", str(tiff), "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        job = p.stdout.decode().strip()
        assert status(quire_bin, st.url, job)["service"] == "ocr.document"
        p = run(quire_bin, "result", job, "--wait", "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        result = validate_result(json.loads(p.stdout))
        assert result["metadata"]["format"] == "tiff" and result["metadata"]["pageCount"] == 3
        assert [[ln["text"] for ln in page_lines(page)] for page in result["pages"]] == [d.lines for d in drawings]
        p = run(quire_bin, "recognize", str(tiff), "--format", "pdf", "--broker", st.url)
        assert p.returncode == 0, p.stderr.decode()
        assert pdftotext(p.stdout) == expected
    finally:
        for proc in reversed(st.processes):
            proc.stop()


@pytest.fixture(scope="module")
def document_stack(quire_bin, zctx, tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("document-stack")
    st = start_stack(zctx, log_dir, [
        [quire_bin, "broker", "--bind", "{url}", "--data", str(log_dir / "jobs"), "--stats", "off"],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--documents", "1"],
    ])
    yield st
    for proc in reversed(st.processes):
        proc.stop()


def document_reply(stack, options, data, timeout=60):
    started = time.monotonic()
    body = stack.call(b"ocr.document", [json.dumps(options).encode(), data], timeout=timeout)
    return json.loads(body[0]), time.monotonic() - started


HOSTILE = [
    ("no body after the header", lambda t: b"%PDF-1.7\n", {}, "corrupt_image"),
    ("garbage after the header", lambda t: b"%PDF-1.4\n" + bytes(range(256)) * 40, {}, "corrupt_image"),
    ("needs a password", lambda t: tp.encrypted(t, "user-secret"), {}, "password_protected"),
    ("no pages", lambda t: tp.zero_pages(), {}, "corrupt_image"),
    ("one page too large to render", lambda t: tp.huge_page(), {"textLayer": "ignore"}, "too_many_pixels"),
    ("a TIFF that is not one", lambda t: b"II*\x00" + b"\xff" * 64, {}, "corrupt_image"),
]


@pytest.mark.parametrize("name, make, options, code", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_documents_get_the_typed_error_ocr_gives(document_stack, tmp_path, name, make, options, code):
    """What `ocr.document` cannot split goes whole to one page job, whose worker says why in the
    protocol's words: the same error as `ocr`'s, in bounded time, and the service keeps serving."""
    doc, seconds = document_reply(document_stack, options, make(tmp_path))
    assert seconds < 15, name
    assert doc.get("error", {}).get("code") == code, doc
    good, _ = document_reply(document_stack, {}, tp.scanned([oi.render_lines(["Still serving"], "sans", 40)] * 2))
    assert [page["text"].split() for page in good["pages"]] == [["Still", "serving"]] * 2


@pytest.mark.parametrize("make", [tp.form_drawing_itself, tp.image_claiming_billions_of_pixels, tp.page_tree_loop, tp.content_bomb])
def test_pathological_documents_end_in_bounded_time(document_stack, make):
    doc, seconds = document_reply(document_stack, {}, make())
    assert seconds < 20, make.__name__
    if "error" in doc:
        assert doc["error"]["code"] in ("corrupt_image", "too_many_pixels"), doc
    else:
        assert all(not p["text"].strip() for p in validate_result(doc)["pages"]), doc


def test_with_auth_on_the_document_worker_submits_pages_as_its_own_client(quire_bin, zctx, tmp_path):
    """Auth on: a document's pages are jobs the worker submits with its own client's token. Without
    credentials it says so (not as the caller's missing token); with them the document reads."""
    data = tmp_path / "tokens"

    app, worker = add_client(quire_bin, data, "app"), add_client(quire_bin, data, "documents")
    st = start_stack(zctx, tmp_path, [
        [quire_bin, "broker", "--bind", "{url}", "--data", str(tmp_path / "jobs"), "--stats", "off", "--auth", "on"],
        [quire_bin, "worker", "token", "--broker", "{url}", "--data", str(data)],
        [quire_bin, "worker", "ocr", "--broker", "{url}", "--threads", "1", "--documents", "1", "--data", str(tmp_path / "none")],
    ])
    try:
        drawings = [oi.render_lines(words_of(n), "sans", 28) for n in range(1, 3)]
        doc = tmp_path / "two.pdf"
        doc.write_bytes(scanned(drawings))
        env = dict(_env(), QUIRE_CLIENT_ID=app["client_id"], QUIRE_CLIENT_SECRET=app["client_secret"])

        def recognize():
            return subprocess.run([quire_bin, "call", "ocr.document", "{}", "@" + str(doc), "--broker", st.url],
                                  capture_output=True, timeout=120, env=env)
        p = recognize()
        assert p.returncode == 1, p
        error = json.loads(p.stderr.decode().strip().splitlines()[-1])["error"]
        assert error["code"] == "service_unavailable" and "QUIRE_CLIENT_ID" in error["message"], error
        # The same worker with a client of its own.
        st.processes[-1].stop()
        own = Proc([quire_bin, "worker", "ocr", "--broker", st.url, "--threads", "1", "--documents", "1"], tmp_path / "ocr-with-client.log",
                   env=dict(_env(), QUIRE_CLIENT_ID=worker["client_id"], QUIRE_CLIENT_SECRET=worker["client_secret"]))
        st.processes.append(own)
        wait_service(zctx, st.url, b"ocr.document")
        p = recognize()
        assert p.returncode == 0, p.stderr.decode()
        result = validate_result(json.loads(p.stdout.decode().strip().splitlines()[-1]))
        assert [[ln["text"] for ln in page_lines(page)] for page in result["pages"]] == [d.lines for d in drawings]
    finally:
        for proc in reversed(st.processes):
            proc.stop()


def test_the_status_schema_examples_are_valid():
    """titanic-status.schema.json's examples, a running document job's progress among them."""
    examples = json.load(open(SCHEMAS / "titanic-status.schema.json"))["examples"]
    assert any("progress" in e for e in examples)
    for example in examples:
        _validate(STATUS, example, "an example")
