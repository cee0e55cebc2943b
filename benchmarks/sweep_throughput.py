"""Sweep throughput and orchestrator overhead per trial, at several concurrency levels.

    python benchmarks/sweep_throughput.py                   # 200 trials, concurrency 1, 8, 32
    python benchmarks/sweep_throughput.py --mode real --trials 24
    python benchmarks/sweep_throughput.py --executor ray --concurrency 64 --trials 256

`--executor ray` runs every level on the local executor and twice on a Ray cluster (a local one
of `--ray-nodes` worker nodes started here, or `--ray-address`): `ray cold` starts Ray's worker
processes as it goes, `ray warm` reuses them. One table.

Two modes, because a real trial's cost (sandbox start, agent loop, a scorer process importing
torch) is far larger than the orchestrator's and would hide it on a small machine:

- `null` (default): the whole orchestrator runs for real (spec, planner, SQLite ledger, staging
  folders and atomic moves, index.json rebuilt after every trial, limits), but each trial is a
  stand-in that writes a complete trial folder (transcript, kernel.py, score.json) after
  `--trial-ms`.
- `real`: `scripted:reference` through the real run_trial in process sandboxes with timing
  skipped (correctness and anti-hack checks still run).

Overhead per trial = the time from the trial being marked running to its result being recorded
and the index rebuilt, minus the time spent inside the trial runner itself: the orchestrator's
own bookkeeping (staging folder, reading the trial's files, atomic move, ledger commits,
index.json rebuild), plus any time the event loop was busy with other trials' bookkeeping.
On Ray the trial's own time is measured on its node, so the overhead also holds Ray's part:
submitting the task, leasing a worker (starting one when none is idle), sending the spec and
returning the files, and writing them into the staging folder. Time a Ray task waits for a free
CPU or for a worker process to start is shown apart ('wait s'), not as overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kernelarena.logs import configure  # noqa: E402
from orchestrator.harness_runner import HarnessRunner  # noqa: E402
from orchestrator.ledger import Ledger  # noqa: E402
from orchestrator.limits import Limits  # noqa: E402
from orchestrator.planner import PlannedTrial, plan, resolve_tasks  # noqa: E402
from orchestrator.prepare import LEDGER_FILE, freeze  # noqa: E402
from orchestrator.spec import SweepSpec, parse_spec  # noqa: E402
from orchestrator.sweep import SweepRunner  # noqa: E402


def make_spec(trials: int, concurrency: int, out: Path, executor: str = "local") -> SweepSpec:
    # 4 demo tasks x N samples = the trial count (rounded up to a multiple of 4).
    samples = max(1, -(-trials // 4))
    return parse_spec({
        "name": f"bench-c{concurrency}", "out": str(out), "gpus": "cpu", "samples": samples,
        "models": [{"id": "scripted:reference"}], "suites": [{"name": "demo"}],
        "sandbox": {"backend": "process"},
        "concurrency": {"total": concurrency, "default_per_provider": concurrency},
        "score": {"device": "cpu", "skip_timing": True, "seeds": 1},
        "executor": executor,
    }, "benchmark")


def standin_files(trial_id: str) -> dict[str, bytes]:
    """A complete, passing trial folder (transcript, kernel.py, score.json)."""
    events = [{"v": 1, "seq": 0, "ts": "", "type": "trial_start", "payload": {"trial_id": trial_id}},
              {"v": 1, "seq": 1, "ts": "", "type": "trial_end",
               "payload": {"exit_reason": "done", "usage": {"input_tokens": 10, "output_tokens": 5, "dollars": 0}}}]
    return {"transcript.jsonl": "".join(json.dumps(e) + "\n" for e in events).encode(),
            "kernel.py": b"# stand-in\n",
            "score.json": json.dumps({"verdict": "passed", "timing": {"speedup": 1.0}}).encode()}


def ray_standin(trial_s: float):
    """The Ray task body of null mode: the stand-in trial, run on a worker node."""

    def body(spec_json: str, image: object) -> object:
        import ray

        from orchestrator.ray_executor import TrialReply

        start, started_at = time.monotonic(), time.time()
        time.sleep(trial_s)
        files = standin_files(json.loads(spec_json)["trial_id"])
        return TrialReply(files, ray.get_runtime_context().get_node_id(), time.monotonic() - start, started_at)

    return body


class NullTrial:
    """Writes a complete, passing trial folder after a fixed delay (no sandbox, no scorer)."""

    def __init__(self, trial_s: float) -> None:
        self.trial_s = trial_s
        self.durations: dict[str, float] = {}

    async def __call__(self, trial: PlannedTrial, out_dir: Path) -> None:
        start = time.monotonic()
        await asyncio.sleep(self.trial_s)
        for name, data in standin_files(trial.trial_id).items():
            (out_dir / name).write_bytes(data)
        self.durations[trial.trial_id] = time.monotonic() - start


class SpanProgress:
    """ProgressSink recording when each trial started and finished (from the orchestrator's view)."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.spans: dict[str, float] = {}

    def trial_started(self, trial: PlannedTrial) -> None:
        self.started[trial.trial_id] = time.monotonic()

    def trial_finished(self, trial: PlannedTrial, row: object, will_retry: bool) -> None:
        self.spans[trial.trial_id] = time.monotonic() - self.started[trial.trial_id]

    def provider_paused(self, provider: str, pause_s: float, error: str) -> None:
        return None


class TimedRunner:
    """The real HarnessRunner, recording each run_trial's own duration."""

    def __init__(self, inner: HarnessRunner) -> None:
        self.inner = inner
        self.durations: dict[str, float] = {}

    async def __call__(self, trial: PlannedTrial, out_dir: Path) -> None:
        start = time.monotonic()
        await self.inner(trial, out_dir)
        self.durations[trial.trial_id] = time.monotonic() - start


async def run_level(mode: str, trials: int, concurrency: int, trial_s: float, root: Path,
                    executor: str = "local") -> dict[str, float]:
    out = root / f"{executor}-c{concurrency}"
    out.parent.mkdir(parents=True, exist_ok=True)
    spec = make_spec(trials, concurrency, out, executor)
    tasks = resolve_tasks(spec)
    planned = plan(spec, tasks)[:trials]
    freeze(out, spec, tasks)
    progress = SpanProgress()
    with Ledger(out / LEDGER_FILE) as ledger:
        ledger.add_planned(planned)
        if executor == "ray":
            from orchestrator.ray_executor import RayTrialRunner, ray_execution

            async with ray_execution(spec, out.name) as ray_run:
                ray_runner = ray_run.runner
                if mode == "null":
                    ray_runner = RayTrialRunner(spec, out.name, "cpu", None, body=ray_standin(trial_s))
                start = time.monotonic()
                outcome = await SweepRunner(spec, out, ledger, planned, ray_runner, ray_run.limits, progress,
                                            breaker=ray_run.breaker).run()
                wall = time.monotonic() - start
            durations = ray_runner.run_s
            waits = ray_runner.wait_s
        else:
            limits = Limits(spec, ["cpu"])
            runner: NullTrial | TimedRunner
            runner = NullTrial(trial_s) if mode == "null" else TimedRunner(HarnessRunner(spec, limits, sweep_label=out.name))
            start = time.monotonic()
            outcome = await SweepRunner(spec, out, ledger, planned, runner, limits, progress).run()
            wall = time.monotonic() - start
            durations = runner.durations
            waits = {t: 0.0 for t in durations}  # waits for a scoring device are inside the runner
    overheads = [progress.spans[t] - durations[t] - waits[t] for t in durations]
    return {
        "concurrency": concurrency,
        "trials": len(planned),
        "done": outcome.counts["done"],
        "wall_s": wall,
        "trials_per_min": len(planned) / wall * 60,
        "trial_s_median": statistics.median(durations.values()),
        "wait_s_median": statistics.median(waits.values()),
        "overhead_ms_median": statistics.median(overheads) * 1000,
        "overhead_ms_p90": statistics.quantiles(overheads, n=10)[-1] * 1000 if len(overheads) > 1 else overheads[0] * 1000,
    }


def start_ray(address: str | None, nodes: int, node_cpus: int) -> object | None:
    """Connect this process to Ray (the executor then reuses the connection); without an
    address, start a local cluster: a head with no CPUs and `nodes` worker nodes of `node_cpus`
    logical CPUs each (a trial task takes one). Returns the cluster to stop."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = None
    if address is None:
        cluster = Cluster()
        cluster.add_node(num_cpus=0, include_dashboard=False, object_store_memory=200 * 1024**2)
        for _ in range(nodes):
            cluster.add_node(num_cpus=node_cpus, object_store_memory=200 * 1024**2)
        cluster.wait_for_nodes()
        address = cluster.address
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("null", "real"), default="null")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--trial-ms", type=float, default=50.0, help="null mode: each stand-in trial's duration")
    parser.add_argument("--keep", action="store_true", help="keep the sweep folders")
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="ray: run each level on the local executor and on Ray, one table")
    parser.add_argument("--ray-address", help="an existing Ray cluster (default: start a local one here)")
    parser.add_argument("--ray-nodes", type=int, default=2, help="worker nodes of the local Ray cluster")
    parser.add_argument("--ray-node-cpus", type=int,
                        help="logical CPUs of each local worker node (default: enough for the highest concurrency); "
                             "real mode on a small machine: its real cores, or every trial scores at once")
    args = parser.parse_args()
    configure(level="WARNING")
    root = Path(tempfile.mkdtemp(prefix="kernelarena-bench-"))
    os.environ.setdefault("TRITON_INTERPRET", "1")
    # Ray twice: the first pass starts the worker processes (cold), the second reuses them.
    executors = ["local", "ray", "ray"] if args.executor == "ray" else ["local"]
    print(f"mode={args.mode} trials={args.trials} cpus={os.cpu_count()}"
          + (f" stand-in trial={args.trial_ms:g} ms" if args.mode == "null" else ""))
    print(f"{'executor':>8} {'conc':>5} {'trials':>6} {'wall s':>8} {'trials/min':>11} {'trial s (med)':>13} "
          f"{'wait s (med)':>12} {'overhead ms (med)':>18} {'overhead ms (p90)':>18}")
    cluster = None
    try:
        if "ray" in executors:
            node_cpus = args.ray_node_cpus or -(-max(args.concurrency) // args.ray_nodes)
            cluster = start_ray(args.ray_address, args.ray_nodes, node_cpus)
        for c in args.concurrency:
            for i, executor in enumerate(executors):
                r = asyncio.run(run_level(args.mode, args.trials, c, args.trial_ms / 1000, root / str(i), executor))
                label = executor if executor == "local" else ("ray cold" if executors.index("ray") == i else "ray warm")
                print(f"{label:>8} {c:>5} {r['trials']:>6} {r['wall_s']:>8.2f} {r['trials_per_min']:>11.1f} "
                      f"{r['trial_s_median']:>13.3f} {r['wait_s_median']:>12.3f} {r['overhead_ms_median']:>18.2f} "
                      f"{r['overhead_ms_p90']:>18.2f}",
                      flush=True)
    finally:
        if cluster is not None or args.ray_address:
            import ray

            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print("overhead = per trial, (marked running -> recorded and index rebuilt) - time inside the trial\n"
          "runner: staging, reading the trial's files, atomic move, ledger commits, index.json rebuild,\n"
          "and waits for the event loop while it does the same for other trials. In null mode the\n"
          "stand-in trial's own time also stretches when the loop is busy (see 'trial s').")


if __name__ == "__main__":
    main()
