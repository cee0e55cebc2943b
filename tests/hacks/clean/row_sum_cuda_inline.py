# task: row_sum
# gpu-only
# CUDA C++ row reduction: one block per row, warp shuffles then shared memory.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float warp_sums[32];
    const float* row = x + (long)blockIdx.x * cols;
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffff, acc, off);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.f;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
        if (threadIdx.x == 0) y[blockIdx.x] = v;
    }
}

torch::Tensor row_sum(torch::Tensor x) {
    auto xc = x.contiguous();
    int rows = xc.size(0), cols = xc.size(1);
    auto y = torch::empty({rows, 1}, xc.options());
    row_sum_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""

_ext = load_inline("ka_clean_row_sum", cpp_sources="torch::Tensor row_sum(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["row_sum"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_sum(x)
