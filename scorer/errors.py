"""Named scorer errors. A failing *kernel* is never an exception: it is a verdict."""


class ScorerUserError(ValueError):
    """Bad input to the scorer (unknown suite or task, unreadable manifest). One line, names
    the fix; the CLI turns it into exit code 2."""


# How `python -m scorer` begins the line it prints when it exits 1 for a ScorerBroken: a sweep's
# trial scores the kernel again on seeing it (harnesses/trial.py).
SCORER_BROKE = "scorer broke:"


class ScorerBroken(RuntimeError):
    """The scorer itself could not do its job (worker protocol broke, not the kernel's doing)."""
