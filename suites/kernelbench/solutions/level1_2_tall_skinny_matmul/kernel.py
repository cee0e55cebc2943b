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
def _skinny_matmul_kernel(a_ptr, bt_ptr, c_ptr, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # K is tiny, so each program does one or two dots and the cost is the output store:
    # consecutive programs take consecutive column tiles of one row band so the stores of
    # neighbouring programs land in the same DRAM pages.
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = tl.program_id(0) // tiles_n
    pid_n = tl.program_id(0) % tiles_n
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
        # B is (K, N) with K tiny: a K-contiguous copy costs ~1 MB of traffic and lets the
        # TF32 tensor cores take it directly.
        Bt = torch.empty((N, K), device=B.device, dtype=B.dtype)
        _transpose_kernel[(triton.cdiv(K, 32), triton.cdiv(N, 32))](B, Bt, K, N, BLOCK=32, num_warps=4)
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        BM, BN, BK = 128, 128, 32
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        _skinny_matmul_kernel[grid](A, Bt, C, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=8)
        return C
