"""ResNet basic block: two implicit-GEMM 3x3 convolutions with inference BatchNorm, ReLU and the
residual add fused into their epilogues.

float32 inputs; tl.dot runs on TF32 tensor cores on NVIDIA GPUs (task tolerance 1e-2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_bn_kernel(
    x_ptr, w_ptr, gamma_ptr, beta_ptr, mean_ptr, var_ptr, res_ptr, y_ptr,
    NB, C_IN, H, W, C_OUT, eps,
    KS: tl.constexpr, HAS_RES: tl.constexpr, RELU: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Implicit-GEMM KSxKS convolution (stride 1, same padding, NCHW) + inference BatchNorm
    [+ residual] [+ ReLU]. Rows are output pixels, columns output channels, K = C_IN*KS*KS;
    input patches are gathered on the fly, never materialised (no im2col buffer)."""
    pid_p = tl.program_id(0)
    pid_c = tl.program_id(1)
    HW = H * W
    rp = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    rc = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    n = rp // HW
    hw = rp % HW
    oh = hw // W
    ow = hw % W
    p_ok = rp < NB * HW
    K = C_IN * KS * KS
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        ci = kk // (KS * KS)
        kh = (kk // KS) % KS
        kw = kk % KS
        ih = oh[:, None] + kh[None, :] - (KS // 2)
        iw = ow[:, None] + kw[None, :] - (KS // 2)
        a_mask = p_ok[:, None] & (kk[None, :] < K) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + n[:, None].to(tl.int64) * C_IN * HW + ci[None, :] * HW + ih * W + iw,
                    mask=a_mask, other=0.0)
        wt = tl.load(w_ptr + rc[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & (rc[None, :] < C_OUT), other=0.0)
        acc += tl.dot(a, wt)
    c_ok = rc < C_OUT
    gamma = tl.load(gamma_ptr + rc, mask=c_ok, other=1.0)
    beta = tl.load(beta_ptr + rc, mask=c_ok, other=0.0)
    mean = tl.load(mean_ptr + rc, mask=c_ok, other=0.0)
    var = tl.load(var_ptr + rc, mask=c_ok, other=1.0)
    scale = gamma / tl.sqrt(var + eps)
    y = (acc - mean[None, :]) * scale[None, :] + beta[None, :]
    out_off = n[:, None].to(tl.int64) * C_OUT * HW + rc[None, :] * HW + hw[:, None]
    mask = p_ok[:, None] & c_ok[None, :]
    if HAS_RES:
        y += tl.load(res_ptr + out_off, mask=mask, other=0.0)
    if RELU:
        y = tl.maximum(y, 0.0)
    tl.store(y_ptr + out_off, y, mask=mask)


def _conv_bn(x: torch.Tensor, weight: torch.Tensor, bn: tuple, residual: torch.Tensor | None,
             relu: bool) -> torch.Tensor:
    """bn = (gamma, beta, running_mean, running_var, eps) of an inference-mode BatchNorm2d."""
    gamma, beta, mean, var, eps = bn
    NB, C_in, H, W = x.shape
    C_out, ks = weight.shape[0], weight.shape[-1]
    y = torch.empty((NB, C_out, H, W), device=x.device, dtype=torch.float32)
    bp, bc, bk, warps = (128, 64, 32, 4) if x.is_cuda else (32, 32, 16, 4)
    grid = (triton.cdiv(NB * H * W, bp), triton.cdiv(C_out, bc))
    _conv_bn_kernel[grid](
        x, weight, gamma, beta, mean, var, residual if residual is not None else y, y,
        NB, C_in, H, W, C_out, eps,
        KS=ks, HAS_RES=residual is not None, RELU=relu,
        BLOCK_P=bp, BLOCK_C=bc, BLOCK_K=bk, num_warps=warps, num_stages=3 if x.is_cuda else 1,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        bn1 = (self.bn1.weight, self.bn1.bias, self.bn1.running_mean, self.bn1.running_var, self.bn1.eps)
        bn2 = (self.bn2.weight, self.bn2.bias, self.bn2.running_mean, self.bn2.running_var, self.bn2.eps)
        out = _conv_bn(x, self.conv1.weight, bn1, None, relu=True)
        return _conv_bn(out, self.conv2.weight, bn2, x, relu=True)
