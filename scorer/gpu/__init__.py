"""The device: timing, the GPU lock and its trace, the device gate, the compile gap, bf16 arithmetic for Triton's CPU interpreter."""
