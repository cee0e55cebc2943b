"""The web app's JSON API and its readers, without a browser: transcript paging (torn lines, a
growing file, type filters), roofline shares, and the one-line errors of the API and the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnesses.transcript import Transcript
from orchestrator.web.catalog import roofline_share
from orchestrator.web.transcripts import TranscriptPager
from scorer.checks.dynamic import device_peaks
from scorer.tasks.suites import load_suite
from tests.orchestrator.sweep_helpers import cli
from tests.web.browser import missing_prerequisite
from tests.web.factory import planned_sweep


def _transcript(path: Path, turns: int) -> None:
    with Transcript(path) as t:
        t.event("trial_start", trial_id="demo/swish/m/0")
        for turn in range(turns):
            t.event("model_response", turn=turn, text=f"turn {turn}")
            if turn % 3 == 0:
                t.event("retry", attempt=1, error="HTTP 529", wait_s=1.0)
            t.event("tool_result", name="bash", output="ok", duration_s=0.1)


def test_pages_filters_and_a_growing_transcript(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    _transcript(path, 10)
    lines = path.read_text().splitlines()
    pager = TranscriptPager()

    page = pager.page(path, offset=5, limit=4)
    assert page["total"] == len(lines)
    assert [e["i"] for e in page["events"]] == [5, 6, 7, 8]
    assert [e["seq"] for e in page["events"]] == [json.loads(lines[i])["seq"] for i in (5, 6, 7, 8)]

    retries = pager.page(path, offset=1, limit=100, types={"retry"})
    assert retries["total"] == 4  # turns 0, 3, 6, 9
    assert [e["type"] for e in retries["events"]] == ["retry"] * 3
    assert pager.summary(path)["counts"] == {"trial_start": 1, "model_response": 10, "retry": 4, "tool_result": 10}

    # A trial still being written: new events, and a torn last line (a crash mid-write), which is skipped.
    with path.open("a") as fh:
        end = {"v": 1, "seq": len(lines), "ts": "2026-12-04T10:00:00+00:00", "type": "trial_end", "payload": {}}
        fh.write(json.dumps(end) + "\n")
        fh.write('{"v": 1, "seq": 99, "ts": "2026-12-04T10:0')
    summary = pager.summary(path)
    assert summary["total"] == len(lines) + 1 and summary["ended"]
    assert pager.page(path, offset=len(lines), limit=10)["events"][0]["type"] == "trial_end"


def test_roofline_share_uses_the_scorers_device_peaks() -> None:
    task = next(t for t in load_suite("demo").tasks.values() if t.flops or t.bytes_moved)
    bandwidth, _fp32, tensor = device_peaks("NVIDIA H200")
    floor_ms = max((task.bytes_moved or 0) / bandwidth, (task.flops or 0) / tensor) * 1e3
    assert roofline_share(task, 4 * floor_ms, "NVIDIA H200") == pytest.approx(0.25)
    assert roofline_share(task, 1.0, None) is None  # scored on the CPU: no peaks
    assert roofline_share(task, None, "NVIDIA H200") is None  # not timed


@pytest.mark.skipif(missing_prerequisite() is not None, reason=str(missing_prerequisite()))
def test_api_on_a_sweep_that_just_started(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from orchestrator.web.app import create_app
    from orchestrator.web.catalog import Catalog

    planned_sweep(tmp_path / "fresh", "fresh", [{"id": "scripted:reference"}, {"id": "scripted:hacker"}], ["swish", "row_sum"])
    client = TestClient(create_app(Catalog([tmp_path], resamples=50)))
    sweeps = client.get("/api/sweeps").json()["sweeps"]
    assert [(s["id"], s["counts"]["pending"], s["hardware"]) for s in sweeps] == [("fresh", 4, "CPU")]
    board = client.get("/api/board/fresh/demo").json()
    assert board["counts"] == {"pending": 4, "running": 0, "done": 0, "failed": 0}
    assert {m["finished"] for m in board["board"]["models"]} == {0}
    kernel = client.get("/api/kernel/fresh/demo/swish").json()
    assert kernel["reference"] and "class ModelNew" in kernel["reference"]  # the suite's reference solution
    assert [t["state"] for t in kernel["trials"]] == ["pending", "pending"]

    missing = client.get("/api/board/nope/demo")
    assert missing.status_code == 404 and "no sweep 'nope'" in missing.json()["error"]
    no_transcript = client.get("/api/transcript", params={"sweep": "fresh", "trial": "demo/swish/scripted:hacker/0"})
    assert no_transcript.status_code == 404 and "no transcript yet" in no_transcript.json()["error"]
    assert client.get("/vendor/plotly.min.js").status_code == 200


def test_serve_refuses_a_missing_folder_in_one_line(tmp_path: Path) -> None:
    proc = cli("serve", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "is not a folder" in proc.stderr


@pytest.mark.skipif(missing_prerequisite() is not None, reason=str(missing_prerequisite()))
def test_serve_refuses_a_port_in_use_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = cli("serve", str(tmp_path), "--port", str(taken.getsockname()[1]), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "choose another --port" in proc.stderr


@pytest.mark.skipif(missing_prerequisite() is not None, reason=str(missing_prerequisite()))
def test_ctrl_c_stops_serve_while_a_browser_holds_the_event_stream(tmp_path: Path) -> None:
    import http.client
    import signal
    import socket
    import subprocess
    import sys
    import time

    from tests.orchestrator.sweep_helpers import REPO

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "serve", str(tmp_path), "--port", str(port)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/api/events")
                stream = conn.getresponse()
                break
            except OSError:
                why = proc.stderr.read() if proc.poll() is not None else "no server"
                assert proc.poll() is None and time.monotonic() < deadline, why
                time.sleep(0.2)
        assert stream.readline().startswith(b"event: version")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
        conn.close()
    finally:
        proc.kill()
    assert proc.returncode in (0, 130) and "Traceback" not in err, err  # 130: the usual code after Ctrl-C


def test_a_contended_timing_travels_from_score_json_to_the_boards(tmp_path: Path) -> None:
    """score.json's `contended` reaches the ledger (through the trial summary), the board's cell,
    the model's count, the Markdown and HTML boards and the kernel page's API; a quiet one does not."""
    pytest.importorskip("httpx", reason="the web extra is not installed; run make install")
    from starlette.testclient import TestClient

    from orchestrator.index import load_index, rebuild_index
    from orchestrator.leaderboard import build_leaderboard, render_markdown
    from orchestrator.leaderboard_html import render_html
    from orchestrator.ledger import Ledger
    from orchestrator.prepare import LEDGER_FILE
    from orchestrator.trial_files import SCORE_FILE, summarize_trial
    from orchestrator.web.app import create_app
    from orchestrator.web.catalog import Catalog
    from scorer.score import Score, TimingResult

    out = tmp_path / "busy"
    spec, planned = planned_sweep(out, "busy", [{"id": "scripted:reference"}], ["swish", "row_sum"])
    with Ledger(out / LEDGER_FILE) as ledger:
        for trial, contended in zip(planned, (True, False), strict=True):
            folder = out / trial.rel_dir
            folder.mkdir(parents=True, exist_ok=True)
            Score(suite=trial.suite, task=trial.task, verdict="passed",
                  timing=TimingResult(device="cpu", timer="cpu/perf_counter", baseline_ms=2.0, kernel_ms=1.0, speedup=2.0),
                  contended=contended, contention={"retimed": ["kernel"], "windows": [{"stage": "kernel", "foreign_cores": 1.7}]}
                  if contended else {}).write(folder / SCORE_FILE)
            ledger.mark_running(trial.trial_id)
            ledger.finish(trial.trial_id, "done", summarize_trial(folder))
        rebuild_index(out, spec, ledger)
    board = build_leaderboard(load_index(out), resamples=0)
    cells = {k.task: c for k in board.kernels for c in k.cells}
    assert cells[planned[0].task].contended and not cells[planned[1].task].contended
    assert board.models[0].contended == 1
    markdown = render_markdown(board)
    assert markdown.count("(contended)") == 2  # the one cell, and the note that explains the mark
    html = render_html(board, out, out / "board.html")
    assert "x2.00 (contended)" in html and "foreign compute" in html, html

    client = TestClient(create_app(Catalog([tmp_path], resamples=0)))
    trials = {t: client.get(f"/api/kernel/busy/demo/{t}").json()["trials"][0] for t in (planned[0].task, planned[1].task)}
    busy, quiet = trials[planned[0].task], trials[planned[1].task]
    assert busy["contended"] and busy["details"]["contended"] and busy["details"]["contention"]["retimed"] == ["kernel"]
    assert not quiet["contended"] and not quiet["details"]["contended"]
    cell = next(c for k in client.get("/api/board/busy/demo").json()["board"]["kernels"] for c in k["cells"]
                if k["task"] == planned[0].task)
    assert cell["contended"]
