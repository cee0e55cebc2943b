"""bf16 arithmetic in Triton's CPU interpreter (scorer/gpu/interpreter_bf16.py).

Each case runs in a fresh interpreter process, so the wrapped interpreter never leaks into other
tests: once without the emulation (the pinned interpreter's own bf16 maths) and once with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from scorer.gpu.interpreter_bf16 import decode, encode

REPO = Path(__file__).resolve().parents[2]

_PROGRAM = r'''
import json, sys
import torch, triton, triton.language as tl
if sys.argv[1] == "emulated":
    from scorer.gpu import interpreter_bf16
    assert interpreter_bf16.install()

@triton.jit
def fma_rows(x_ptr, y_ptr, o_ptr, s_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    tl.store(o_ptr + i, x * y + x)
    tl.store(s_ptr + 0, tl.sum(x, 0))
    tl.store(s_ptr + 1, tl.max(x, 0))
    tl.store(s_ptr + 2, tl.argmin(x, 0).to(tl.bfloat16))

@triton.jit
def dot_tile(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    tl.store(c_ptr + i[:, None] * N + i[None, :], tl.dot(a, b))

g = torch.Generator().manual_seed(0)
x = torch.randn(16, generator=g).bfloat16(); y = torch.randn(16, generator=g).bfloat16()
o = torch.empty_like(x); s = torch.empty(3, dtype=torch.bfloat16)
fma_rows[(1,)](x, y, o, s, N=16)
a = torch.randn(16, 16, generator=g).bfloat16(); b = torch.randn(16, 16, generator=g).bfloat16()
c = torch.empty(16, 16)
dot_tile[(1,)](a, b, c, N=16)
xf = x.float()
print(json.dumps({
    "fma": (o.float() - (xf * y.float() + xf)).abs().max().item(),
    "sum": abs(s[0].item() - xf.sum().item()), "max": abs(s[1].item() - xf.max().item()),
    "argmin": abs(s[2].item() - xf.argmin().item()),
    "dot": (c - a.float() @ b.float()).abs().max().item(),
}))
'''


def _run(mode: str) -> dict[str, float]:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", _PROGRAM, mode], capture_output=True, text=True, env=env,
                         cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_encode_rounds_to_nearest_even_and_decodes_exactly() -> None:
    values = np.array([1.0, -2.5, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.0e38, 0.0], dtype=np.float32)
    bits = encode(values)
    # bf16 steps by 2^-7 near 1: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 and rounds to the
    # even one (1.0); 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6 and rounds up.
    assert decode(bits).tolist() == [1.0, -2.5, 1.0, 1.015625, float(decode(encode(np.float32(3.0e38)))), 0.0]
    assert np.isnan(decode(encode(np.array([np.nan], dtype=np.float32)))).all()


def test_pinned_interpreter_computes_bf16_on_bits_and_the_emulation_fixes_it() -> None:
    raw = _run("raw")
    # The interpreter's own bf16 maths is garbage: when this stops failing, Triton fixed it and
    # the emulation can go.
    assert raw["fma"] > 1.0 or raw["dot"] > 1.0
    fixed = _run("emulated")
    assert fixed["fma"] < 0.05
    assert fixed["dot"] < 0.5  # fp32 accumulation of bf16 tiles, compared with fp32 matmul of the same values
    assert fixed["sum"] < 0.1 and fixed["max"] == 0.0 and fixed["argmin"] == 0.0


_AUTOTUNED = r'''
import sys
import torch, triton, triton.language as tl
if sys.argv[1] == "emulated":
    from scorer.gpu import interpreter_bf16
    assert interpreter_bf16.install()

@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

x = torch.randn(300); y = torch.empty_like(x)
double[lambda meta: (triton.cdiv(300, meta["BLOCK"]),)](x, y, 300)
print("ok" if torch.equal(y, x * 2) else "wrong")
'''


def test_multi_config_autotune_runs_in_the_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    raw = subprocess.run([sys.executable, "-c", _AUTOTUNED, "raw"], capture_output=True, text=True, env=env,
                         cwd=REPO, timeout=300)
    assert raw.returncode != 0 and "driver" in raw.stderr  # the pinned interpreter cannot time configs
    fixed = subprocess.run([sys.executable, "-c", _AUTOTUNED, "emulated"], capture_output=True, text=True, env=env,
                           cwd=REPO, timeout=300)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "ok", fixed.stderr[-2000:]
