# task: swish
# gpu-only
# CUDA C++ extension that launches on a stream from the pool and returns without any wait.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>

__global__ void swish_kernel(const float* x, float* y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v / (1.f + __expf(-v)); }
}

torch::Tensor swish(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/true);
    swish_kernel<<<(n + 255) / 256, 256, 0, side.stream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

_ext = load_inline("side_stream_swish", cpp_sources="torch::Tensor swish(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["swish"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.swish(x.contiguous())
