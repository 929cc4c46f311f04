"""`quire bench soak` for a minute, as CI runs it (docs/benchmarks.md has the hour): the stack as separate
processes, pages and a PDF over the four paths, the first worker restarted with SIGTERM and then SIGKILL.
Nothing may be lost or answered differently, and every process must have been sampled.

The pages are rendered here (real words, DejaVu via Pillow), the PDF is made of them.
Needs: PyPI pillow.
"""

import json
import signal
import subprocess

import pytest

import ocr_images as oi
from conftest import QUIRE_BIN
from test_ocr import _env
from test_pdf_input import scanned

PARAGRAPH = ["Durable jobs survive a worker that", "is stopped or killed while it reads,",
             "and every answer is the same text", "as the first one for the same file."]


@pytest.mark.timeout_s(400)
def test_a_minute_of_mixed_load_loses_nothing_and_samples_every_process(tmp_path):
    page = oi.render_lines(PARAGRAPH, "serif", 34)
    photo = oi.render_lines(["OPEN", "7 DAYS"], "sans", 72)
    (tmp_path / "page.png").write_bytes(oi.png(page.image))
    (tmp_path / "sign.jpg").write_bytes(oi.jpeg(photo.image))
    (tmp_path / "two-pages.pdf").write_bytes(scanned([page, oi.render_lines(PARAGRAPH[::-1], "sans", 34)], dpi=150))
    bench = subprocess.Popen([QUIRE_BIN, "bench", "soak", "--minutes", "1", "--sample-s", "10", "--rest-s", "8", "--clients", "2", "--json", "--quiet",
                              str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    try:
        out, err = bench.communicate(timeout=360)
    finally:
        if bench.poll() is None:
            # SIGINT, not SIGKILL: the benchmark stops the stack's processes on its way out.
            bench.send_signal(signal.SIGINT)
            bench.communicate(timeout=30)
    assert bench.returncode == 0, err.decode()[-3000:]
    report = json.loads(out)
    paths = {row["path"]: row for row in report["paths"]}
    assert set(paths) == {"zeromq", "job", "cloud-vision", "azure-read"}
    for name, row in paths.items():
        assert row["answered"] > 0 and row["wrong"] == 0 and row["failed"] == 0, (name, row, report["problems"])
    assert report["files"] == 3 and report["documents"] == 1
    assert [(r["role"], r["signal"]) for r in report["restarts"]] == [("worker-1", "SIGTERM"), ("worker-1", "SIGKILL")]
    sampled = {(s["role"], s["instance"]) for s in report["samples"]}
    assert {("broker", 1), ("gateway", 1), ("worker-1", 1), ("worker-1", 2), ("worker-1", 3), ("worker-2", 1), ("bench", 1)} <= sampled
    assert all(s["rss_bytes"] > 0 and s["open_files"] > 0 and s["threads"] > 0 for s in report["samples"])
    # Every process's growth is told twice: its last sample, and its floor (the lowest of the first and
    # of the last window of samples after its warm-up), each from its own samples.
    for p in report["processes"]:
        mine = [s["rss_bytes"] for s in report["samples"] if (s["role"], s["instance"]) == (p["role"], p["instance"])
                and p["from_second"] <= s["second"] <= p["to_second"]]
        assert 1 <= p["floor_window"] <= len(mine), (p, mine)
        assert p["rss_floor_warm_bytes"] == min(mine[:p["floor_window"]]) and p["rss_floor_end_bytes"] == min(mine[-p["floor_window"]:]), (p, mine)
    # CPU: every process's time read from /proc, rising; the rows' and the windows' answers add up to
    # the same, and the workers spent CPU on them.
    for key in {(s["role"], s["instance"]) for s in report["samples"]}:
        cpu = [s["cpu_seconds"] for s in report["samples"] if (s["role"], s["instance"]) == key]
        assert cpu == sorted(cpu) and cpu[-1] > 0, (key, cpu)
    assert len(report["machine_samples"]) >= len(report["intervals"])
    windows = report["windows"]
    assert windows and windows[-1]["to_second"] == report["intervals"][-1]["second"], windows
    assert sum(w["answers"] for w in windows) == sum(i["answers"] for i in report["intervals"]), (windows, report["intervals"])
    assert all(w["worker_cpu_seconds_per_answer"] > 0 and 0 < w["machine_busy_percent"] <= 100 for w in windows), windows
    assert all(0 <= w["worker_system_cpu_seconds_per_answer"] < w["worker_cpu_seconds_per_answer"] and w["worker_minor_faults_per_answer"] > 0
               for w in windows), windows
    for probe in ("probe_milliseconds", "memory_probe_milliseconds"):
        assert all(w[probe] > 0 for w in windows) and all(m[probe] > 0 for m in report["machine_samples"]), (probe, windows)
    assert all(0 < i["workers_cpu_percent"] <= 100 * 2 * 1.1 for i in report["intervals"] if i["answers"] > 0), report["intervals"]
    # At rest (the load paused after the warm-up, and once it was over): every process that lived
    # through both read twice, the first after the warm-up.
    rest = {}
    for s in report["rest_samples"]:
        rest.setdefault((s["role"], s["instance"]), []).append(s)
    for key in [("broker", 1), ("gateway", 1), ("worker-2", 1), ("bench", 1)]:
        assert len(rest.get(key, [])) == 2 and rest[key][0]["second"] >= report["warmup_seconds"], (key, rest)
        assert all(s["rss_bytes"] > 0 for s in rest[key]), rest[key]
    # The growth of a process that lived through the pause is read from a row's time after it, not from
    # the reading at rest (an idle worker hands its freed pages back).
    settled = rest[("broker", 1)][0]["second"] + min(report["sample_seconds"], report["warmup_seconds"])
    # (A process gone before then, worker-1 at its first restart, is summed up from its first reading.)
    starts = [(p["role"], p["instance"], p["from_second"]) for p in report["processes"] if p["to_second"] >= settled]
    assert len(starts) >= 5, report["processes"]
    assert all(second >= settled for _, _, second in starts), (settled, starts, [(s["role"], s["second"]) for s in report["rest_samples"]])
    # The load never stalled: at most two 10 s intervals (a killed worker's request waits for its
    # heartbeats to run out) went by without an answer.
    assert len(report["intervals"]) >= 5, report["intervals"]
    assert sum(1 for i in report["intervals"] if i["answers"] == 0) <= 2, report["intervals"]
