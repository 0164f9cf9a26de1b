"""Errors a user can cause and fix; the CLI prints them as one line."""


class DicegraphError(Exception):
    """Base class of every error meant for the user rather than a traceback."""


class UnknownGame(DicegraphError):
    """A game name that is not registered."""


class BadParameter(DicegraphError):
    """An unknown builder parameter or a value outside its range."""


class InvalidGraph(DicegraphError):
    """A builder streamed rows that break the graph model's rules."""


class TooLarge(DicegraphError):
    """Work too large to do without being told to: a graph to build (its size is estimated first), a diagram to
    draw (past the size guard)."""
