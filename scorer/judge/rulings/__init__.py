"""The checks, one module each; importing this package registers them all (scorer/judge/registry.py)."""

from scorer.judge.rulings import (
                                  channel,
                                  in_process,
                                  input_hashes,
                                  judge_clock,
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
                                  static_source,
)

__all__ = ["channel", "in_process", "input_hashes", "judge_clock", "launch_census", "library_calls", "native_memory",
           "output_object", "processes", "protocol", "reference", "reported_timing", "roofline", "rubric", "static_source"]
