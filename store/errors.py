"""Errors of the store, all meant to reach the user as one line."""

from graphs.errors import DicegraphError


class DatabaseError(DicegraphError):
    """The database is missing, unreadable, or of a schema this dicegraph cannot use."""


class NotFound(DicegraphError):
    """A graph, position or policy named by the user is not in the database."""


class Ambiguous(DicegraphError):
    """A name the user gave fits several stored things (graphs of one game with other parameters)."""


class ReadOnly(DicegraphError):
    """A statement tried to write through a read-only connection."""
