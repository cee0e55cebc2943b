"""Three-layer MLP: three tiled tl.dot GEMMs with bias and ReLU fused into the epilogues.

float32 inputs; tl.dot runs on TF32 tensor cores on NVIDIA GPUs (task tolerance 1e-2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(
    a_ptr, w_ptr, bias_ptr, res_ptr, c_ptr, M, N, K,
    s_am, s_ak, s_wn, s_wk, s_rm, s_rn, s_cm, s_cn,
    HAS_BIAS: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    """C = act(A @ W^T + bias) + residual; W is (N, K) as nn.Linear stores it.

    ACT: 0 none, 1 relu, 2 gelu (erf form), 3 silu.
    """
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped tile order: neighbouring programs share A row-panels and W column-panels in L2.
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * s_am + kk[None, :] * s_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * s_wn + kk[:, None] * s_wk,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w)
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0)[None, :]
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    elif ACT == 2:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    elif ACT == 3:
        acc = acc * tl.sigmoid(acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_RES:
        acc += tl.load(res_ptr + rm[:, None] * s_rm + rn[None, :] * s_rn, mask=mask, other=0.0)
    tl.store(c_ptr + rm[:, None] * s_cm + rn[None, :] * s_cn, acc, mask=mask)


def _linear(a: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, act: int = 0,
            residual: torch.Tensor | None = None) -> torch.Tensor:
    """act(a @ weight.T + bias) + residual for a 2-D `a` (any strides)."""
    M, K = a.shape
    N = weight.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    if a.is_cuda:
        bm, bn, bk, warps, stages = 128, 128, 32, 8, 3
    else:  # the CPU interpreter pays per element of a tile, not per launch
        bm, bn, bk, warps, stages = 32, 32, 32, 4, 1
    res = residual if residual is not None else c
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _linear_kernel[grid](
        a, weight, bias if bias is not None else c, res, c, M, N, K,
        a.stride(0), a.stride(1), weight.stride(0), weight.stride(1), res.stride(0), res.stride(1),
        c.stride(0), c.stride(1),
        HAS_BIAS=bias is not None, ACT=act, HAS_RES=residual is not None,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden_features: int, out_features: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, hidden_features)
        self.fc3 = nn.Linear(hidden_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _linear(x, self.fc1.weight, self.fc1.bias, act=1)
        h = _linear(h, self.fc2.weight, self.fc2.bias, act=1)
        return _linear(h, self.fc3.weight, self.fc3.bias)
