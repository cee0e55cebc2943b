# task: swish
# A C++ extension that writes its own loops: a CUDA kernel on the GPU and a plain host loop for CPU
# tensors (the CUDA source is compiled only where CUDA is), with torch used for glue only
# (contiguous, empty_like). The host loop's ATen calls are allocation, which costs nothing.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

#ifdef KA_WITH_CUDA
torch::Tensor swish_cuda(torch::Tensor x);
#endif

torch::Tensor swish_host(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v / (1.0f + std::exp(-v));
    }
    return y;
}

torch::Tensor swish(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == at::kFloat, "float32 expected");
#ifdef KA_WITH_CUDA
    if (x.is_cuda()) return swish_cuda(x);
#endif
    return swish_host(x);
}
"""

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float v = x[i];
        y[i] = v / (1.f + __expf(-v));
    }
}

torch::Tensor swish_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    int blocks = (int)std::min<long>((n + 255) / 256, 65535);
    swish_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

_WITH_CUDA = torch.cuda.is_available()
_ext = load_inline(
    name="ka_clean_swish_portable",
    cpp_sources=[_CPP],
    cuda_sources=[_CUDA] if _WITH_CUDA else [],
    functions=["swish"],
    extra_cflags=["-O2"] + (["-DKA_WITH_CUDA"] if _WITH_CUDA else []),
    verbose=False,
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.swish(x)
