"""Errors of the store, all meant to reach the user as one line."""

import re

from dicegraph.graphs.errors import DicegraphError


class DatabaseError(DicegraphError):
    """The database is missing, unreadable, or of a schema this dicegraph cannot use."""


class NoDatabase(DatabaseError):
    """The database named is not there yet, or holds no dicegraph schema yet: the first command that writes (a
    build) creates it."""


class NotFound(DicegraphError):
    """A graph, position or policy named by the user is not in the database."""


class Ambiguous(DicegraphError):
    """A name the user gave fits several stored things (graphs of one game with other parameters)."""


class ReadOnly(DicegraphError):
    """A statement tried to write through a read-only connection."""


class FilesReachable(ReadOnly):
    """The connection could read the server's files whatever the statement: no read-only statement is run on it."""


READ_ONLY_MESSAGE = "query is read-only: pass --write to change the database (or to attach or write files)"


DAMAGED = ("malformed", "not a database", "file is encrypted", "corrupt")  # the drivers' words for a damaged file


def driver_message(error: BaseException) -> str:
    """Return what a database driver's error says: its text, or for a Spark Thrift server's (PyHive's, which
    carries the server's whole response) the server's message without its Java class names.

    >>> driver_message(Exception("no such table: x"))
    'no such table: x'
    """
    status = getattr(error.args[0], "status", None) if error.args else None
    said = getattr(status, "errorMessage", None)
    if not isinstance(said, str):
        return str(error)
    return re.sub(r"^(Error running query: )?(\[[A-Z_.]+\] )?[\w.$]+(Exception|Error): ", "", said.strip())


def database_failure(error: Exception) -> DatabaseError:
    """Return the one line a user reads for an error the database raised in the middle of a command: a damaged
    file says so, with what still works and how to save what is left; any other error is the driver's first line.

    >>> database_failure(Exception("database disk image is malformed"))  # doctest: +ELLIPSIS
    DatabaseError('the database file is damaged (database disk image is malformed): ...')
    """
    message = driver_message(getattr(error, "orig", None) or error).strip().splitlines()
    first = message[0] if message else type(error).__name__
    if any(word in first.lower() for word in DAMAGED):
        return DatabaseError(f"the database file is damaged ({first}): commands that read only its undamaged parts "
                             "may still work (dicegraph graphs lists what it can read); build into a new file, or "
                             "save what is left with: sqlite3 FILE .recover")
    return DatabaseError(f"database error: {first}")


def file_failure(error: OSError) -> DicegraphError:
    """Return the one line a user reads for a file that cannot be read or written: where, and why.

    >>> file_failure(PermissionError(13, "Permission denied", "out.png"))
    DicegraphError('file error out.png: Permission denied')
    """
    where = f" {error.filename}" if error.filename else ""
    return DicegraphError(f"file error{where}: {error.strerror or error}")
