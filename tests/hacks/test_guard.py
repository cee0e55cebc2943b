"""RuntimeGuard in a real child process (an audit hook cannot be removed, so never in pytest's
own): each scenario is a kernel file that is armed, imported and called like the worker does, and
what the guard observed crosses JSON and is ruled as the judge rules it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCENARIOS = {
    "honest": """
        import enum, logging, math, os
        from collections import namedtuple
        from dataclasses import dataclass
        import numpy as np
        import torch
        Pair = namedtuple("Pair", "a b")
        class Mode(enum.Enum):
            A = 1
        @dataclass
        class Cfg:
            block: int = 128
        log = logging.getLogger(__name__)
        HERE = os.path.dirname(os.path.abspath(__file__))
        def run():
            log.info("running %s", Pair(1, 2))
            with open(os.path.join(HERE, "scratch.txt"), "w") as fh:
                fh.write("ok")
            return torch.ones(4).mul(2) + math.pi + float(np.float32(1))
    """,
    # torch.library.custom_op imports torch._dynamo, which re-wraps torch.manual_seed itself.
    "honest_custom_op": """
        import torch
        @torch.library.custom_op("guard_test::twice", mutates_args=())
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2
        def run():
            torch.manual_seed(0)
            return torch.ops.guard_test.twice(torch.ones(3))
    """,
    "manual_seed_shim": """
        import torch
        def run():
            setattr(torch, "manual_seed", torch._disable_dynamo(lambda seed: None))
    """,
    "manual_seed_forged_wraps": """
        import functools, torch
        ORIG = torch.manual_seed
        @functools.wraps(ORIG)
        def fake(seed, _orig=ORIG):
            return _orig(0)
        def run():
            setattr(torch, "manual_seed", fake)
    """,
    "perf_counter": """
        import time
        def run():
            time.perf_counter = lambda: 0.0
    """,
    "elapsed_time": """
        import torch
        def run():
            torch.cuda.Event.elapsed_time = lambda self, end: 0.001
    """,
    "scorer_function": """
        import sys
        def run():
            timing = sys.modules["scorer.gpu.timing"]
            timing.median_and_spread = lambda times: (0.001, 0.0)
    """,
    "getframe": """
        import sys
        def run():
            return sys._getframe(1).f_locals
    """,
    "inspect_stack": """
        import inspect
        def run():
            return [f.frame for f in inspect.stack()]
    """,
    "gc_walk": """
        import gc
        def run():
            return len(gc.get_objects())
    """,
    "thread_alive": """
        import threading
        EVT = threading.Event()
        def run():
            threading.Thread(target=EVT.wait, name="sneaky", daemon=True).start()
    """,
    "raw_native_thread": """
        import _thread, time
        def nap(up):
            up.release()
            time.sleep(30)
        def run():
            up = _thread.allocate_lock()
            up.acquire()
            _thread.start_new_thread(nap, (up,))
            up.acquire()  # the thread runs (the guard samples it until it waits)
    """,
    "subprocess": """
        import subprocess
        def run():
            subprocess.run(["true"])
    """,
    "open_scorer": """
        import scorer.gpu.timing as t
        def run():
            return open(t.__file__).read()
    """,
    # A torch helper that reads the caller's frames (TorchScript's resolution callback): the guard
    # must credit the kernel, not torch, for what it asked torch to do.
    "frames_via_torch_helper": """
        from torch._jit_internal import createResolutionCallbackFromFrame
        def run():
            return createResolutionCallbackFromFrame(1)("results")
    """,
    "open_via_torch_helper": """
        import torch
        def run():
            try:
                torch.load("/etc/passwd", weights_only=True)
            except Exception:
                pass
    """,
    # A folder beside an allowed one whose name only extends it (TMPDIR + "-judge"): not allowed.
    "open_prefix_sibling": """
        import os
        def run():
            sibling = os.environ["TMPDIR"].rstrip("/") + "-judge"
            os.makedirs(sibling, exist_ok=True)
            with open(os.path.join(sibling, "planted.py"), "w") as fh:
                fh.write("x = 1")
    """,
    "ctypes_peek": """
        import ctypes
        def run():
            return ctypes.string_at(id(run), 16)
    """,
    # A library (outside kernel.py and the standard library) starting a thread of its own, as
    # Triton's or torch's compile workers do: not the kernel's thread.
    "library_thread": """
        import fakelib
        def run():
            fakelib.start_worker()
            fakelib.start_pool_worker()  # a standard-library target, started by the library
    """,
    # The same library running a function of kernel.py's on its thread: the kernel's thread.
    "library_thread_kernel_target": """
        import fakelib, time
        def spin():
            time.sleep(30)
        def run():
            fakelib.start_worker(spin)
    """,
    # A native thread whose start routine is in a shared object the kernel brought (as a
    # load_inline extension's std::thread would be).
    "extension_thread": """
        import ctypes, os
        def run():
            ctypes.CDLL(os.environ["SPIN_SO"]).start_spinner()  # returns once the thread runs
    """,
    # A site-packages library wrapping a pipe it made itself in file objects (subprocess does, and
    # torch on some first calls): the library's descriptors, not the kernel reaching for one.
    "library_pipe": """
        import pipelib
        def run():
            return pipelib.pipe_probe()
    """,
    "open_fd": """
        def run():
            open(1, "w", closefd=False).flush()
    """,
    "fdopen_fd": """
        import os
        def run():
            os.fdopen(1, "w", closefd=False).flush()
    """,
    # OpenMP/intra-op workers started by torch for a parallel op in the glue (last: they stay).
    "runtime_pool": """
        import torch
        def run():
            torch.set_num_threads(4)
            torch.ones(1 << 22).add_(1.0)
            a = torch.randn(256, 256, dtype=torch.bfloat16)
            return (a @ a).float().sum()
    """,
}

FAKELIB = """
import threading, time
def _idle():
    time.sleep(30)
def start_worker(target=None):
    threading.Thread(target=target or _idle, name="lib-worker", daemon=True).start()
def start_pool_worker():
    threading.Thread(target=threading.Event().wait, name="lib-pool", daemon=True).start()
"""

PIPELIB = """
import os
def pipe_probe():
    r, w = os.pipe()
    with open(w, "wb") as out, open(r, "rb") as inp:
        out.write(b"x")
        out.flush()
        return inp.read(1)
"""

SPIN_C = """
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
static volatile int up;
static void* spin(void* arg) { __atomic_store_n(&up, 1, __ATOMIC_SEQ_CST); for (;;) sleep(1); return arg; }
void start_spinner(void) {
    pthread_t t; pthread_create(&t, 0, spin, 0);
    while (!__atomic_load_n(&up, __ATOMIC_SEQ_CST)) sched_yield();
}
"""

DRIVER = r"""
import importlib.util, json, sys
from pathlib import Path
import torch
import scorer.gpu.timing, scorer.checks.dynamic
from scorer.checks.guard import RuntimeGuard
from scorer.judge.rulings.runtime_guard import guard_findings
from scorer.workers.replies import GuardObservation
import fakelib  # a library already imported, as torch and triton are, before the kernel is


def ruled(observed):
    return guard_findings(GuardObservation.parse(json.loads(json.dumps(observed))))


results = {}
for path in sys.argv[1:]:
    guard = RuntimeGuard(Path(path))
    guard.arm()
    spec = importlib.util.spec_from_file_location("kernel_" + Path(path).parent.name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    load = ruled(guard.check("load"))
    module.run()
    run = ruled(guard.check("correctness"))
    again = ruled(guard.check("timing"))
    results[Path(path).parent.name] = {"load": [f.to_dict() for f in load], "run": [f.to_dict() for f in run],
                                       "again": [f.to_dict() for f in again]}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("guard")
    tmpdir = tmp_path_factory.mktemp("guard-tmp")  # the worker's TMPDIR, outside the kernels' folders
    lib = tmp_path_factory.mktemp("lib")  # outside the kernels' folder, which the guard denies
    (lib / "fakelib.py").write_text(FAKELIB)
    (lib / "site-packages").mkdir()  # where an installed library's frames are
    (lib / "site-packages" / "pipelib.py").write_text(PIPELIB)
    (base / "spin.c").write_text(SPIN_C)
    spin_so = lib / "libspin.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(spin_so), str(base / "spin.c"), "-lpthread"],
                   check=True, capture_output=True)
    paths = []
    for name, body in SCENARIOS.items():
        folder = base / name
        folder.mkdir()
        (folder / "kernel.py").write_text(textwrap.dedent(body))
        paths.append(str(folder / "kernel.py"))
    proc = subprocess.run([sys.executable, "-c", DRIVER, *paths], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={"PYTHONPATH": f"{REPO}:{lib}:{lib}/site-packages", "PATH": "/usr/bin:/bin",
                                                      "SPIN_SO": str(spin_so), "TMPDIR": str(tmpdir)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _found(results: dict, name: str) -> list[dict]:
    r = results[name]
    return r["load"] + r["run"]


def test_honest_code_is_silent(results: dict) -> None:
    assert _found(results, "honest") == []
    assert _found(results, "honest_custom_op") == [], "\n".join(f["evidence"] for f in _found(results, "honest_custom_op"))
    assert _found(results, "library_pipe") == []


def test_runtime_threads_are_not_the_kernels(results: dict) -> None:
    # Threads started by a library for itself and torch's OpenMP/BLAS workers (named like the
    # process, so only their code tells them apart) are attributed to the runtime.
    assert _found(results, "library_thread") == []
    assert _found(results, "runtime_pool") == []


@pytest.mark.parametrize("name,pattern,needle", [
    ("perf_counter", "timer-patching", "time.perf_counter"),
    ("manual_seed_shim", "timer-patching", "torch.manual_seed"),
    ("manual_seed_forged_wraps", "timer-patching", "torch.manual_seed"),
    ("elapsed_time", "timer-patching", "torch.cuda.Event.elapsed_time"),
    ("scorer_function", "timer-patching", "scorer.gpu.timing.median_and_spread"),
    ("getframe", "harness-introspection", "sys._getframe"),
    ("inspect_stack", "harness-introspection", "sys._getframe"),
    ("gc_walk", "harness-introspection", "gc.get_objects"),
    ("thread_alive", "thread-injection", "sneaky"),
    ("raw_native_thread", "thread-injection", "started outside `threading`"),
    ("library_thread_kernel_target", "thread-injection", "lib-worker"),
    ("extension_thread", "thread-injection", "code of libspin.so"),
    ("subprocess", "thread-injection", "subprocess.Popen"),
    ("open_scorer", "harness-introspection", "timing.py"),
    ("ctypes_peek", "harness-introspection", "ctypes.string_at"),
    ("frames_via_torch_helper", "harness-introspection", "sys._getframe"),
    ("open_via_torch_helper", "harness-introspection", "/etc/passwd"),
    ("open_prefix_sibling", "harness-introspection", "-judge/planted.py"),
    ("open_fd", "harness-introspection", "open(fd 1)"),
    ("fdopen_fd", "harness-introspection", "open(fd 1)"),
])
def test_attack_is_recorded(results: dict, name: str, pattern: str, needle: str) -> None:
    hits = [f for f in _found(results, name) if f["pattern"] == pattern and needle in f["evidence"]]
    assert hits, _found(results, name)


def test_audit_evidence_names_kernel_line(results: dict) -> None:
    (hit,) = [f for f in results["getframe"]["run"] if "sys._getframe" in f["evidence"]]
    assert hit["evidence"].startswith("kernel.py:4: ")


def test_findings_are_reported_once(results: dict) -> None:
    assert all(results[name]["again"] == [] for name in SCENARIOS)
