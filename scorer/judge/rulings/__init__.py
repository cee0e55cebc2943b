"""The checks, one module each; importing this package registers them all (scorer/judge/registry.py)."""

from scorer.judge.rulings import (
                                  channel,
                                  device_clock,
                                  gpu_hold,
                                  input_hashes,
                                  judge_clock,
                                  kernel_turns,
                                  launch_census,
                                  library_calls,
                                  native_memory,
                                  output_object,
                                  processes,
                                  protocol,
                                  reference,
                                  reported_timing,
                                  roofline,
                                  rubric,
                                  runtime_guard,
                                  static_source,
)

__all__ = ["channel", "device_clock", "gpu_hold", "input_hashes", "judge_clock", "kernel_turns", "launch_census", "library_calls",
           "native_memory", "output_object", "processes", "protocol", "reference", "reported_timing", "roofline",
           "rubric", "runtime_guard", "static_source"]
