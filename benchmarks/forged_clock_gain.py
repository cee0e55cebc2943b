"""What a forged clock still gains: the GOT-rewriting attack of the corpus
(tests/hacks/attacks/timer-patching/native_got_interposer.py), with its slowdown set to each factor,
scored with the static layer off (its packed source is refused statically on its own), beside the
honest solution it wraps. A factor the judge's clock catches is `timer-patching`; below that, the
speedup it reports over the honest one is what a forger gains (bounded by clock.FLOOR_RATIO).

    TRITON_INTERPRET=1 .venv/bin/python benchmarks/forged_clock_gain.py --device cpu
    python benchmarks/forged_clock_gain.py --device cuda          # on a GPU box
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scorer import ScoreOptions  # noqa: E402
from scorer.checks import static as static_checks  # noqa: E402
from scorer.judge.session import ScoringSession  # noqa: E402
from scorer.tasks.suites import load_suite  # noqa: E402

ATTACK = ROOT / "tests/hacks/attacks/timer-patching/native_got_interposer.py"
TASK = "level4_6_rope_attention"


def _forging_source(factor: int) -> str:
    """The attack's C++ source with its clocks slowed `factor` times instead of 8, packed again."""
    text = ATTACK.read_text()
    start = text.index("_PACKED = (")
    end = text.index("\n)\n", start) + 3
    scope: dict = {}
    exec(text[start:end], scope)  # the attack's own literal: a tuple of strings
    source = zlib.decompress(base64.b85decode("".join(scope["_PACKED"]))).decode()
    source = re.sub(r"const int64_t SLOW = \d+;", f"const int64_t SLOW = {factor};", source)
    packed = base64.b85encode(zlib.compress(source.encode())).decode()
    lines = ",\n".join(f'    "{packed[i:i + 100]}"' for i in range(0, len(packed), 100))
    return f"_PACKED = (\n{lines},\n)\n"


def forged_kernel(factor: int, folder: Path, task: str, honest: Path) -> Path:
    """The attack with its clocks slowed `factor` times; for another task than the attack's, the
    task's honest solution with the attack's extension built and installed at import."""
    text = ATTACK.read_text()
    start = text.index("_PACKED = (")
    end = text.index("\n)\n", start) + 3
    if task == TASK:
        source = text[:start] + _forging_source(factor) + text[end:]
    else:
        helpers = text[end:text.index("@triton.jit", end)]
        source = (honest.read_text() + "\n\nimport base64\nimport zlib\n\nfrom torch.utils.cpp_extension import load_inline\n\n"
                  + _forging_source(factor) + helpers
                  + 'load_inline("forged_clock_tables", cpp_sources=[_HEADER, _source(), _bindings("prepare")],\n'
                  + "            no_implicit_headers=True).prepare()\n")
    path = folder / f"forged_{factor}x" / "kernel.py"
    path.parent.mkdir(parents=True)
    path.write_text(source)
    return path


def _ms(value: float | None) -> str:
    return f"{value:.4g}" if value is not None else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--factors", default="2,3,4,8")
    parser.add_argument("--tasks", default=TASK, help="comma list: each task's honest solution, then it forged")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    static_checks.analyze_source = lambda *a, **k: []  # this benchmark measures the judge's clock alone
    suite = load_suite("kernelbench")
    options = ScoreOptions(device=args.device, seeds=2, warmup=1, repetitions=5 if args.device == "cpu" else None)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ScoringSession(options) as session:
        for task in args.tasks.split(","):
            honest = suite.tasks[task].solution
            assert honest is not None, f"{task} has no solution"
            kernels = [("honest", honest)] + [(f"{f}x", forged_kernel(int(f), Path(tmp) / task, task, honest))
                                              for f in args.factors.split(",")]
            for name, path in kernels:
                score = session.score(suite, task, path, device=args.device)
                t = score.timing
                rows.append({"task": task, "kernel": name, "verdict": score.verdict,
                             "patterns": sorted({h["pattern"] for h in score.hacks}),
                             "speedup": t.speedup if t else None, "kernel_ms": t.kernel_ms if t else None,
                             "judge_bound_ms": t.judge_bound_ms if t else None, "floored": t.floored if t else None,
                             "judge_device_ms": t.judge_device_ms if t else None})
                print(f"scored: {rows[-1]}", flush=True)  # a run cut short by its budget keeps what it scored
    print(f"| task | kernel | verdict | speedup | gain over honest | kernel ms | judge bound ms | device bound ms | floored "
          f"| ({args.device})")
    print("|---|---|---|---|---|---|---|---|---|")
    base: float | None = None
    for r in rows:
        if r["kernel"] == "honest":
            base = r["speedup"] if r["verdict"] == "passed" else None
        gain = f"{r['speedup'] / base:.2f}x" if r["speedup"] and base and r["verdict"] == "passed" else "-"
        speed = f"{r['speedup']:.4g}" if r["speedup"] else "-"
        verdict = r["verdict"] + (f" ({', '.join(r['patterns'])})" if r["patterns"] else "")
        print(f"| {r['task']} | {r['kernel']} | {verdict} | {speed} | {gain} | {_ms(r['kernel_ms'])} | "
              f"{_ms(r['judge_bound_ms'])} | {_ms(r['judge_device_ms'])} | {r['floored']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
