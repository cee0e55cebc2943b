import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, R, C, BLOCK: tl.constexpr):
    rr = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rc = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rr[:, None] < R) & (rc[None, :] < C)
    tile = tl.load(x_ptr + rr[:, None] * C + rc[None, :], mask=mask)
    tl.store(y_ptr + rc[:, None] * R + rr[None, :], tl.trans(tile), mask=tl.trans(mask))


@triton.jit
def _matmul_nt_kernel(
    a_ptr, bt_ptr, c_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # C = A @ Bt^T with both operands K-contiguous: the layout Hopper's TF32 tensor-core
    # instructions take without a transpose through shared memory.
    # Output tiles are walked in groups of GROUP_M row-tiles so tiles running together reuse
    # the same Bt rows from L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
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
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(bt_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        # One cheap pass (N*K elements, a few percent of the GEMM's time) buys the fast layout.
        Bt = torch.empty((N, K), device=B.device, dtype=B.dtype)
        _transpose_kernel[(triton.cdiv(K, 64), triton.cdiv(N, 64))](B, Bt, K, N, BLOCK=64, num_warps=4)
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        BM, BN, BK = 128, 128, 32
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        _matmul_nt_kernel[grid](A, Bt, C, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                num_warps=8, num_stages=3)
        return C
