"""Correctness: comparing a kernel's outputs with the reference's (tolerances, index ties) and
evaluating the trials; used by the reference worker, which compares, and by the judge, which
decides."""
