"""Errors that mean "the user must change something", as opposed to bugs."""


class UserError(Exception):
    """A bad config, a missing file, an unknown name. The CLI prints the message on one line
    and exits 2; the message must say what to do about it."""


class ConfigError(UserError):
    """A configuration value (spec field, model id, credential) is wrong or missing."""
