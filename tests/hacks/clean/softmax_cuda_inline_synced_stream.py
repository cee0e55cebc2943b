# task: softmax
# gpu-only
# CUDA C++ softmax launched on a pooled stream that is joined back to the caller's stream with an
# event before returning (a legitimate side-stream pattern).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <cfloat>

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float red[256];
    const float* row = x + (long)blockIdx.x * cols;
    float* out = y + (long)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    red[threadIdx.x] = m; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }
    m = red[0]; __syncthreads();
    float d = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) d += __expf(row[c] - m);
    red[threadIdx.x] = d; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }
    d = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = __expf(row[c] - m) / d;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    int rows = xc.size(0), cols = xc.size(1);
    auto y = torch::empty_like(xc);
    auto caller = at::cuda::getCurrentCUDAStream();
    auto side = c10::cuda::getStreamFromPool();
    cudaEvent_t ready, done;
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaEventRecord(ready, caller.stream());
    cudaStreamWaitEvent(side.stream(), ready, 0);
    softmax_kernel<<<rows, 256, 0, side.stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    cudaEventRecord(done, side.stream());
    cudaStreamWaitEvent(caller.stream(), done, 0);
    cudaEventDestroy(ready);
    cudaEventDestroy(done);
    return y;
}
"""

_ext = load_inline("ka_clean_softmax", cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["softmax_rows"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_rows(x)
