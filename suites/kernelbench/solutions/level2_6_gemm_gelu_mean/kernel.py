import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_gelu_rowsum_kernel(
    x_ptr, w_ptr, b_ptr, part_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Each tile of gelu(x W^T + b) is reduced over its columns right away; the per-tile row
    # sums go to a small (M, tiles_n) buffer instead of atomics, so the result is bitwise
    # reproducible run to run.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    g = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    g = tl.where(rn[None, :] < N, g, 0.0)
    tl.store(part_ptr + rm * tl.num_programs(1) + pid_n, tl.sum(g, axis=1), mask=rm < M)


@triton.jit
def _finish_mean_kernel(part_ptr, y_ptr, M, T, N, BLOCK_M: tl.constexpr, BLOCK_T: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rt = tl.arange(0, BLOCK_T)
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        p = tl.load(part_ptr + rm[:, None] * T + (t0 + rt)[None, :],
                    mask=(rm[:, None] < M) & ((t0 + rt)[None, :] < T), other=0.0)
        acc += tl.sum(p, axis=1)
    tl.store(y_ptr + rm, acc / N, mask=rm < M)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight = self.linear.weight.contiguous()
        M, K = x.shape
        N = weight.shape[0]
        BM, BN, BK = 128, 128, 32
        tiles_n = triton.cdiv(N, BN)
        partial = torch.empty((M, tiles_n), device=x.device, dtype=torch.float32)
        _linear_gelu_rowsum_kernel[(triton.cdiv(M, BM), tiles_n)](
            x, weight, self.linear.bias, partial, M, N, K,
            BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=8, num_stages=3)
        y = torch.empty((M, 1), device=x.device, dtype=torch.float32)
        _finish_mean_kernel[(triton.cdiv(M, 64),)](partial, y, M, tiles_n, N, BLOCK_M=64, BLOCK_T=32)
        return y
