"""The device: timing, the GPU lock and its trace, the device gate, the compile gap, whether a task
fits in device memory, bf16 arithmetic for Triton's CPU interpreter."""
