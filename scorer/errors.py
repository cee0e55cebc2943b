"""Named scorer errors. A failing *kernel* is never an exception: it is a verdict."""


class ScorerUserError(ValueError):
    """Bad input to the scorer (unknown suite or task, unreadable manifest). One line, names
    the fix; the CLI turns it into exit code 2."""


class ScorerBroken(RuntimeError):
    """The scorer itself could not do its job (worker protocol broke, not the kernel's doing)."""
