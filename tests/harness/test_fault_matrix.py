"""The fault matrix: every harness (`minimal` with each SDK client, `claude-code`, `codex`) meets
every way a provider fails, through the real SDKs and CLIs against the wire fakes. Each cell
asserts the exit reason, how often the turn was sent, the provider's own words (or what broke)
in the transcript, that nothing follows trial_end, and that a fault which cannot heal ends the
trial in seconds. The last test checks the table in docs/MODELS.md against the cells that ran
(KA_WRITE_FAULT_MATRIX=1 rewrites it, times included).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harnesses.models import create_model
from harnesses.trial import run_trial
from tests.fakeproviders import FakeProviderServer, Reply
from tests.harness.fault_cells import (
    BEGIN,
    END,
    FAULTS,
    HARNESS_CASES,
    KEY,
    KEY_ENV,
    MATRIX_OPTIONS,
    Cell,
    Fault,
    HarnessCase,
    fault_on_model_turns,
    model_turns,
    outcome_columns,
    read_cell,
    render,
)
from tests.harness.helpers import agents_image, events, spec  # noqa: F401

DOC = Path(__file__).resolve().parents[2] / "docs" / "MODELS.md"
CELLS: dict[tuple[str, str], Cell] = {}
MINIMAL = [c for c in HARNESS_CASES if not c.docker]
CLIS = [c for c in HARNESS_CASES if c.docker]
WALL_S = 90.0
# A fault that cannot heal ends a trial in seconds; one retried twice with a 1 s timeout, a
# few more. Agent CLIs add a container and a Node start.
LIMIT_S = {True: 8.0, False: 4.0}
CLI_EXTRA_S = 25.0


@pytest.fixture(autouse=True)
def matrix_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, FakeProviderServer]]:
    """One fake per minimal case for the whole module; each cell sets its own fault. Each SDK
    is imported here, once, as a sweep would: a cell's time is the trial's own."""
    started: dict[str, FakeProviderServer] = {}
    try:
        for case in MINIMAL:
            started[case.id] = server = case.server(script=[Reply.say("unreachable: every turn fails")], api_key=KEY)
            server.start()
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv(KEY_ENV, KEY)
                asyncio.run(create_model(case.model, **MATRIX_OPTIONS, base_url=server.base_url).aclose())
        yield started
    finally:
        for server in started.values():
            server.stop()


async def run_cell(case: HarnessCase, fault: Fault, server: FakeProviderServer, out: Path) -> tuple[Cell, list[dict[str, Any]]]:
    fault_on_model_turns(server, fault)
    trial = spec(case.model, harness=case.harness, backend="docker" if case.docker else "process",
                 model_options={**MATRIX_OPTIONS, "base_url": server.base_url}, budget={"wall_time_s": WALL_S})
    started = time.monotonic()
    await run_trial(trial, out)
    cell, evs = read_cell(case, fault, out, model_turns(server), time.monotonic() - started)
    CELLS[(case.id, fault.id)] = cell
    return cell, evs


def check_cell(case: HarnessCase, fault: Fault, cell: Cell, evs: list[dict[str, Any]]) -> None:
    types = [e["type"] for e in evs]
    assert types.count("trial_end") == 1 and types[-1] == "trial_end", types[-5:]
    assert cell.exit_reason == fault.exit_reason, (cell, [e["payload"] for e in evs if e["type"] == "error"])
    assert cell.evidence != "-", [e["payload"] for e in evs if e["type"] == "error"]
    if fault.exit_reason == "credentials":
        assert KEY_ENV in next(e["payload"]["message"] for e in evs if e["type"] == "error")
    limit = LIMIT_S[fault.attempts > 1] + (CLI_EXTRA_S if case.docker else 0.0)
    assert cell.seconds < limit, cell


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.id)
@pytest.mark.parametrize("case", MINIMAL, ids=lambda c: c.id)
async def test_minimal_cell(case: HarnessCase, fault: Fault, servers: dict[str, FakeProviderServer], tmp_path: Path) -> None:
    cell, evs = await run_cell(case, fault, servers[case.id], tmp_path)
    check_cell(case, fault, cell, evs)
    # minimal's only retries are the policy's, one event each.
    assert (cell.attempts, cell.retry_events) == (fault.attempts, fault.attempts - 1), cell


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("agents_image")
@pytest.mark.parametrize("case", CLIS, ids=lambda c: c.id)
async def test_cli_cells(case: HarnessCase, tmp_path: Path) -> None:
    """All faults for one CLI, a few trials at a time (each with its own fake): a container
    and a Node start per cell would otherwise dominate the matrix's time."""
    gate = asyncio.Semaphore(4)

    async def one(fault: Fault) -> tuple[Fault, Cell, list[dict[str, Any]], Path]:
        async with gate:
            with case.server(script=[Reply.say("unreachable: every turn fails")], api_key=KEY) as server:
                out = tmp_path / fault.id.replace(" ", "_")
                cell, evs = await run_cell(case, fault, server, out)
                return fault, cell, evs, out

    results = await asyncio.gather(*(one(f) for f in FAULTS))
    await asyncio.sleep(2.0)  # a late write from a proxy shutting down would land by now
    for fault, cell, evs, out in results:
        assert events(out) == evs, f"{fault.id}: events were written after trial_end"
        check_cell(case, fault, cell, evs)
        if fault.exit_reason == "error" and fault.attempts == 1 or fault.exit_reason == "credentials":
            # The proxy ends the trial on the first refusal; the CLI never asks again.
            assert cell.attempts == 1, cell
        else:
            # Retried by the proxy's policy (HTTP statuses) or by the CLI (a reply that broke
            # off), never past the policy's bound.
            assert 1 <= cell.attempts <= fault.attempts, cell


def test_the_table_in_the_docs_is_the_matrix() -> None:
    """Runs last: the cells this session ran, against docs/MODELS.md's table."""
    if not CELLS:
        pytest.skip("no matrix cell ran in this session")
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"docs/MODELS.md lacks the {BEGIN} ... {END} block"
    head, rest = text.split(BEGIN, 1)
    documented_block, tail = rest.split(END, 1)
    ran = [CELLS[(case.id, fault.id)] for case in HARNESS_CASES for fault in FAULTS if (case.id, fault.id) in CELLS]
    if os.environ.get("KA_WRITE_FAULT_MATRIX") and len(ran) == len(HARNESS_CASES) * len(FAULTS):
        DOC.write_text(head + render(ran) + tail, encoding="utf-8")
        return
    documented = {tuple(outcome_columns(line)[:2]): outcome_columns(line)
                  for line in documented_block.splitlines() if line.startswith("| ") and not line.startswith("| harness")}
    for cell in ran:
        assert documented.get((cell.harness, cell.fault)) == outcome_columns(cell.row()), (
            f"docs/MODELS.md's fault matrix differs for {cell.harness} / {cell.fault}: rerun with KA_WRITE_FAULT_MATRIX=1")
