"""Soak: 1,000 OCR requests, good and bad mixed, through a real `quire up`.

Every request gets its answer (a result or the expected typed error), the process keeps serving,
and its memory stays flat: engines are reused, every image, Leptonica PIX and Tesseract result is
freed, on the error paths too.
"""

import io
import json
import os
import random
import subprocess
import time

import pytest
import zmq
from PIL import Image, ImageDraw, ImageFont

from conftest import QUIRE_BIN, free_port, try_mmi

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
TOTAL = 1000
IN_FLIGHT = 8


def line_png(text):
    font = ImageFont.truetype(FONT, 28)
    image = Image.new("L", (520, 56), 255)
    ImageDraw.Draw(image).text((10, 10), text, font=font, fill=0)
    out = io.BytesIO()
    image.save(out, format="PNG", dpi=(300, 300))
    return out.getvalue()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


@pytest.mark.timeout_s(240)
def test_thousand_requests_memory_flat(tmp_path):
    port = free_port()
    url = "tcp://127.0.0.1:%d" % port
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_") or k == "QUIRE_AUTH"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data-home")
    log = open(tmp_path / "up.log", "wb")
    up = subprocess.Popen([QUIRE_BIN, "up", "--bind", url, "--threads", "2"], stdout=subprocess.DEVNULL, stderr=log, env=env)
    ctx = zmq.Context()
    try:
        deadline = time.monotonic() + 30
        while try_mmi(ctx, url, b"ocr") != b"200":
            assert up.poll() is None, "quire up exited: %s" % (tmp_path / "up.log").read_text()
            assert time.monotonic() < deadline, "ocr workers did not register"
            time.sleep(0.1)

        words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
        good = [(line_png("%s %s %d" % (words[i % 8], words[(i + 3) % 8], i)), "%s" % words[i % 8]) for i in range(16)]
        png = good[0][0]
        rng = random.Random(7)
        cases = []
        for i in range(TOTAL):
            kind = i % 10
            if kind == 7:
                cases.append(([b"{}", bytes(rng.getrandbits(8) for _ in range(300))], "not_an_image"))
            elif kind == 8:
                cases.append(([b"{}", png[: len(png) // 2]], "corrupt_image"))
            elif kind == 9:
                cases.append(([b'{"languages":["tlh"]}', png], "unknown_language"))
            else:
                image, word = good[i % len(good)]
                cases.append(([b'{"mode":"line"}', image], word))

        sockets = []
        for _ in range(IN_FLIGHT):
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.connect(url)
            sockets.append(s)
        poller = zmq.Poller()
        for s in sockets:
            poller.register(s, zmq.POLLIN)

        pending = {}
        next_case = 0
        answered = 0
        rss_after_warmup = None
        started = time.monotonic()

        def send(sock):
            nonlocal next_case
            frames, expect = cases[next_case]
            sock.send_multipart([b"MDPC02", b"\x01", b"ocr"] + frames)
            pending[sock] = (next_case, expect)
            next_case += 1

        for s in sockets:
            send(s)
        while answered < TOTAL:
            assert time.monotonic() - started < 200, "soak too slow: %d answered" % answered
            ready = dict(poller.poll(10_000))
            assert ready, "no reply within 10 s after %d answers" % answered
            for s in ready:
                reply = s.recv_multipart()
                index, expect = pending.pop(s)
                assert reply[:3] == [b"MDPC02", b"\x03", b"ocr"], reply[:3]
                body = json.loads(reply[3])
                if "error" in body:
                    assert body["error"]["code"] == expect, (index, body)
                else:
                    assert expect in body["text"], (index, expect, body["text"])
                answered += 1
                if answered == 150:
                    rss_after_warmup = rss_kib(up.pid)
                if next_case < TOTAL:
                    send(s)
        rss_end = rss_kib(up.pid)
        growth = rss_end - rss_after_warmup
        print("RSS after 150 requests: %d KiB, after %d: %d KiB (growth %d KiB)" % (rss_after_warmup, TOTAL, rss_end, growth))
        assert growth < 12 * 1024, "RSS grew by %d KiB over %d requests" % (growth, TOTAL - 150)
        assert up.poll() is None
    finally:
        ctx.destroy(linger=0)
        up.terminate()
        try:
            up.wait(timeout=10)
        except subprocess.TimeoutExpired:
            up.kill()
        log.close()
