"""Errors that mean "the user must change something", as opposed to bugs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class UserError(Exception):
    """A bad config, a missing file, an unknown name. The CLI prints the message on one line
    and exits 2; the message must say what to do about it."""


class ConfigError(UserError):
    """A configuration value (spec field, model id, credential) is wrong or missing."""


def first_problem(exc: ValidationError, whole: str = "(top level)") -> tuple[str, str]:
    """(where, what) of a pydantic error's first problem, worded for a one-line user error:
    the field's dotted path (`whole` when the problem is the object itself) and pydantic's
    message without its "Value error, " prefix; an unknown and a missing field say the fix."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or whole
    if err["type"] == "extra_forbidden":
        return where, "unknown field; check the spelling"
    if err["type"] == "missing":
        return where, "required field is missing; add it"
    return where, err["msg"].removeprefix("Value error, ")
