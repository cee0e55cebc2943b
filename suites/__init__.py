"""Benchmark suites shipped with KernelArena (data only: manifests, task files, solutions)."""

from pathlib import Path

SUITES_DIR = Path(__file__).resolve().parent
