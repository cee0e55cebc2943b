"""Shared plumbing for the KernelArena packages: user errors, the plug-in registry, logging,
atomic file writes, text truncation.

The scorer deliberately does not import this package (it must run with torch and the standard
library alone); everything else may.
"""

__version__ = "0.1.0"
