"""A task's rubric as its manifest states it: what the task asked for beyond a correct answer
(the rules are applied by scorer/checks/rubric.py).

Optional fields of a task in suite.toml:

* ``rubric_dtype = "float8_e4m3fn"``: the dtype the solution's kernels must compute in; the
  source must name it (torch, Triton or C++ spelling) in its kernels or forward-time code.
* ``rubric_forbid = ["cublas", "torch.matmul"]``: libraries or ops the task forbids, whatever
  their share of the work; matched against resolved names and native sources.
* ``rubric_require = { "Kahan-compensated summation" = "kahan|compensat" }``: required algorithm
  notes, each with a regular expression the solution's code (comments and strings excluded) must
  match. A note without an expression (`""`) is shown to the author and not checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rubric:
    dtype: str | None = None
    forbid: tuple[str, ...] = ()
    require: tuple[tuple[str, str], ...] = ()  # (note, regex or "")

    @property
    def empty(self) -> bool:
        return not (self.dtype or self.forbid or self.require)

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Rubric:
        """The rubric fields of one task's manifest entry; ValueError with the fix when malformed."""
        dtype = entry.get("rubric_dtype")
        if dtype is not None and (not isinstance(dtype, str) or not dtype):
            raise ValueError(f"rubric_dtype must be a dtype name such as 'float8_e4m3fn', got {dtype!r}")
        forbid = entry.get("rubric_forbid", [])
        if not isinstance(forbid, list) or not all(isinstance(x, str) and x for x in forbid):
            raise ValueError(f"rubric_forbid must be a list of library or op names, got {forbid!r}")
        require = entry.get("rubric_require", {})
        if not isinstance(require, dict) or not all(isinstance(v, str) for v in require.values()):
            raise ValueError(f"rubric_require must be a table of note = \"regex\" (\"\" to leave it unchecked), got {require!r}")
        for note, pattern in require.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"rubric_require '{note}': {pattern!r} is not a regular expression ({exc})") from None
        return cls(dtype=dtype, forbid=tuple(forbid), require=tuple(require.items()))
