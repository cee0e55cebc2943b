"""Rubric rules per task: parsed from suite.toml (scorer/tasks/rubric.py), checked on the code (scorer/checks/rubric.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.checks.rubric import rubric_findings
from scorer.errors import ScorerUserError
from scorer.tasks.rubric import Rubric
from scorer.tasks.suites import load_suite

SUITE = Path(__file__).resolve().parent / "suites" / "rubric"


def _evidence(source: str, rubric: Rubric) -> list[str]:
    found = rubric_findings(source, rubric, "t")
    assert all(f.pattern == "rubric" and f.severity == "flag" for f in found)
    return [f.evidence for f in found]


def test_suite_fields_reach_the_task() -> None:
    suite = load_suite(str(SUITE))
    assert suite.task("row_sum_kahan").rubric == Rubric(require=(("Kahan-compensated summation", "kahan|compensat"),))
    assert suite.task("swish_own_sigmoid").rubric == Rubric(forbid=("tl.sigmoid",))


def test_required_algorithm_must_appear_in_code_not_comments() -> None:
    rubric = Rubric(require=(("Kahan-compensated summation", "kahan"),))
    plain = "# Kahan summation, as asked\ndef f(x):\n    '''kahan'''\n    return sum(x)\n"
    assert len(_evidence(plain, rubric)) == 1
    assert _evidence("def f(x):\n    c = 0.0  # compensation\n    kahan_c = c\n    return x\n", rubric) == []


def test_unchecked_note_is_not_a_finding() -> None:
    assert _evidence("x = 1\n", Rubric(require=(("use the tensor cores well", ""),))) == []


def test_dtype_path_in_any_spelling() -> None:
    rubric = Rubric(dtype="float8_e4m3fn")
    (e,) = _evidence("y = x.to(torch.bfloat16) @ w.to(torch.bfloat16)\n", rubric)
    assert "float8_e4m3fn" in e
    assert _evidence("a = tl.load(p).to(tl.float8e4nv)\n", rubric) == []
    assert _evidence('src = r"""__global__ void k(__nv_fp8_e4m3* v) {}"""\n', rubric) == []  # native source is code


def test_forbidden_library_by_name_and_in_native_sources() -> None:
    rubric = Rubric(forbid=("cublas", "torch.matmul"))
    found = _evidence('src = r"""#include <cublasLt.h>\ncublasLtMatmul(h);"""\ny = torch.matmul(a, b)\n', rubric)
    assert len(found) == 2 and "cublas" in found[0] and "torch.matmul" in found[1]
    assert _evidence("y = torch.matmul_is_not_called\n", Rubric(forbid=("cublas",))) == []


@pytest.mark.parametrize("entry,needle", [
    ({"rubric_forbid": "cublas"}, "rubric_forbid must be a list"),
    ({"rubric_require": {"x": "("}}, "is not a regular expression"),
    ({"rubric_dtype": 8}, "rubric_dtype must be a dtype name"),
])
def test_malformed_rubric_is_a_user_error(tmp_path: Path, entry: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        Rubric.from_entry(entry)
    (tmp_path / "t.py").write_text((SUITE.parents[3] / "suites" / "demo" / "swish.py").read_text())
    value = repr(entry[next(iter(entry))]).replace("'", '"')
    if isinstance(entry[next(iter(entry))], dict):
        (k, v), = entry[next(iter(entry))].items()
        value = "{ " + f'"{k}" = "{v}"' + " }"
    (tmp_path / "suite.toml").write_text(f'name = "x"\n[tasks.t]\ndtype = "float32"\n{next(iter(entry))} = {value}\n')
    with pytest.raises(ScorerUserError, match="task 't'"):
        load_suite(str(tmp_path))
