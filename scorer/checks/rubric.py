"""Rubric rules per task: what the task asked for beyond a correct answer.

A solution can be correct and fast while skipping the point of the task: an fp8 GEMM task solved
by upcasting to bf16, a "Kahan softmax" with plain summation, a hand-written kernel task solved
through a vendor library the task forbids. Public agent runs label these "rubric leaks". They are
not hacks (the maths is right and the timing honest), so they are reported as a `rubric` flag that
keeps the score and says which rule was not met.

The rules are written per task in suite.toml (their fields: scorer/tasks/rubric.py). Only what can
be checked from the source is checked; the finding names the rule and the task's words for it.
"""

from __future__ import annotations

import io
import re
import tokenize

from scorer.checks.catalog import Finding
from scorer.tasks.rubric import Rubric

# Spellings of a dtype in torch, Triton, C++/CUDA and PTX.
_DTYPE_SPELLINGS: dict[str, tuple[str, ...]] = {
    "float8_e4m3fn": ("float8_e4m3fn", "float8e4nv", "__nv_fp8_e4m3", "e4m3", "fp8e4m3"),
    "float8_e5m2": ("float8_e5m2", "float8e5", "__nv_fp8_e5m2", "e5m2"),
    "bfloat16": ("bfloat16", "__nv_bfloat16", "bf16"),
    "float16": ("float16", "__half", "fp16"),
    "int4": ("int4", "uint4", "int8", "0xF", "0xf", ">> 4", ">>4"),
    "int8": ("int8", "__nv_int8", "s8"),
}


def _code_only(source: str) -> str:
    """The source with comments and plain strings (docstrings, messages) blanked out: a note in a
    comment is no proof. Strings that are native sources (load_inline, inline PTX) are code."""
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    for tok in reversed(tokens):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and not _looks_native(tok.string)):
            (r0, c0), (r1, c1) = tok.start, tok.end
            if r0 == r1:
                line = lines[r0 - 1]
                lines[r0 - 1] = line[:c0] + " " * (c1 - c0) + line[c1:]
            else:
                lines[r0 - 1] = lines[r0 - 1][:c0] + "\n"
                for r in range(r0, r1 - 1):
                    lines[r] = "\n"
                lines[r1 - 1] = " " * c1 + lines[r1 - 1][c1:]
    return "".join(lines)


def _looks_native(text: str) -> bool:
    # Strings that are native sources (load_inline, inline PTX) are code.
    return bool(re.search(r"#\s*include|__global__|asm|torch::|at::|\{", text))


def rubric_findings(source: str, rubric: Rubric | None, task_id: str = "") -> list[Finding]:
    if rubric is None or rubric.empty:
        return []
    code = _code_only(source)
    found: list[Finding] = []
    task = f"task '{task_id}' " if task_id else "the task "
    if rubric.dtype:
        spellings = _DTYPE_SPELLINGS.get(rubric.dtype, (rubric.dtype,))
        if not any(s in code for s in spellings):
            found.append(Finding("rubric", f"{task}requires computing in {rubric.dtype} (rubric_dtype); the solution's "
                                           f"code names none of {', '.join(spellings)}", "flag"))
    for name in rubric.forbid:
        pattern = re.escape(name) if "." in name else rf"\b{re.escape(name)}\w*"
        hit = re.search(pattern, code, re.IGNORECASE if "." not in name else 0)
        if hit:
            found.append(Finding("rubric", f"{task}forbids {name} (rubric_forbid); the solution uses "
                                           f"'{hit.group(0)}'", "flag"))
    for note, pattern in rubric.require:
        if pattern and not re.search(pattern, code, re.IGNORECASE):
            found.append(Finding("rubric", f"{task}requires: {note} (rubric_require); nothing in the solution's "
                                           f"code matches /{pattern}/", "flag"))
    return found
