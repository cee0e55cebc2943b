"""Every way a kernel can fail is a verdict with its error text; the scorer never crashes or hangs."""

from __future__ import annotations

import time
from pathlib import Path

from scorer.tasks.suites import Suite
from tests.scorer.conftest import KERNELS, score_file


def test_wrong_kernel_is_incorrect(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "wrong.py", skip_timing=True)
    assert score.verdict == "incorrect"
    assert score.correctness is not None and score.correctness.passed == 0
    assert score.correctness.mismatch_fraction == 1.0
    assert "outside allclose" in (score.error or "")


def test_syntax_error_is_compile_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "syntax_error.py", skip_timing=True)
    assert score.verdict == "compile_error"
    assert "SyntaxError" in (score.error or "")


def test_segfault_is_runtime_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "segfault.py", skip_timing=True)
    assert score.verdict == "runtime_error"
    assert "segfault (SIGSEGV)" in (score.error or "")


def test_sys_exit_is_runtime_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "sys_exit.py", skip_timing=True)
    assert score.verdict == "runtime_error"
    assert "kernel exited the process with code 3" in (score.error or "")


def test_os_exit_is_runtime_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "os_exit.py", skip_timing=True)
    assert score.verdict == "runtime_error"
    assert "kernel exited the process with code 7" in (score.error or "")


def test_exit_at_import_is_runtime_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "exit_at_import.py", skip_timing=True)
    assert score.verdict == "runtime_error"
    assert "code 5" in (score.error or "")


def test_raising_kernel_is_runtime_error(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "raises.py", skip_timing=True)
    assert score.verdict == "runtime_error"
    assert "kernel bug: index out of range" in (score.error or "")


def test_endless_loop_times_out_within_limit(demo: Suite) -> None:
    start = time.monotonic()
    score = score_file(demo, "swish", KERNELS / "infinite_loop.py", correctness_s=4, skip_timing=True)
    assert score.verdict == "timeout"
    assert "longer than 4 s" in (score.error or "")
    # Spawns and reference work come on top of the 4 s limit; a hang would take forever.
    assert time.monotonic() - start < 60


def test_memory_exhaustion_is_out_of_memory(demo: Suite) -> None:
    # Running into the limit costs kernel time in proportion to it (23 s of CPU at 6 GB, 12 s at 3 GB
    # on the 2-core box): 3 GB is a worker with torch loaded (0.8 GB) and two of the hog's gigabytes.
    score = score_file(demo, "swish", KERNELS / "memory_hog.py", memory_limit_bytes=3 << 30, skip_timing=True,
                       correctness_s=240)
    assert score.verdict == "runtime_error"
    assert (score.error or "").startswith("correctness: out of memory")


def test_missing_file_is_no_kernel(demo: Suite, tmp_path: Path) -> None:
    score = score_file(demo, "swish", tmp_path / "kernel.py")
    assert score.verdict == "no_kernel"
    assert "no kernel file" in (score.error or "")


def test_empty_file_is_no_kernel(demo: Suite, tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text("\n")
    assert score_file(demo, "swish", tmp_path / "kernel.py").verdict == "no_kernel"


def test_missing_model_new_is_no_kernel(demo: Suite) -> None:
    # The file mentions ModelNew in a comment, so only the worker's import can tell.
    score = score_file(demo, "swish", KERNELS / "no_model_new.py", skip_timing=True)
    assert score.verdict == "no_kernel"
    assert score.error == "kernel.py defines no class ModelNew"


def test_kernel_output_noise_does_not_break_the_channel(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "prints_garbage.py")
    assert score.verdict == "passed", score.error


def test_forged_reply_is_a_protocol_violation_not_a_judge_crash(demo: Suite) -> None:
    score = score_file(demo, "swish", KERNELS / "forges_reply.py", skip_timing=True)
    evidence = [h["evidence"] for h in score.hacks if h["pattern"] == "protocol-violation"]
    assert score.verdict == "hack_detected" and evidence, (score.verdict, score.error)
    assert "correctness" in evidence[0] and "keys" in evidence[0]


def test_an_error_on_the_repeat_or_refill_trial_is_a_runtime_error_not_a_finding(demo: Suite) -> None:
    # An H100 under 8 scorings read an error on the refill trial as caching-memoization ("no
    # outputs returned"): a hack verdict for what the kernel's error text explains.
    score = score_file(demo, "swish", KERNELS / "raises_on_refill.py", skip_timing=True)
    assert score.verdict == "runtime_error", (score.verdict, score.hacks)
    assert "out of scratch space" in (score.error or "") and "refill-0-with-1" in (score.error or "")
