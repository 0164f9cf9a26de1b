"""Where results go: check that a file or folder can be written before any work is done.

A diagram or an archive is written after the work that produces it (a solve
may take minutes), so the place is checked first: its folder is created, and
a scratch file is written and removed there, which catches what permission
bits do not show (an immutable folder, a full or read-only file system).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> check_file(folder / "new" / "x.png") == folder / "new" / "x.png"
True
>>> _ = (folder / "x.png").write_text("")
>>> check_file(folder / "x.png" / "y.png")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
store.output.OutputError: cannot write .../x.png/y.png: .../x.png is a file, not a folder
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from graphs.errors import DicegraphError


class OutputError(DicegraphError):
    """A file or folder the user named cannot be written."""


def check_directory(directory: Path, target: Path | None = None) -> Path:
    """Create ``directory`` if needed and make sure files can be written in it; return it.

    Raises OutputError naming the place (``target``, when it is a file to go
    there) and the reason.
    """
    target = target or directory
    for parent in (directory, *directory.parents):
        if parent.exists() and not parent.is_dir():
            raise OutputError(f"cannot write {target}: {parent} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor, scratch = tempfile.mkstemp(prefix=".dicegraph-", dir=directory)
        os.close(descriptor)
        os.unlink(scratch)
    except OSError as error:
        raise OutputError(f"cannot write {target}: {error.strerror or error}") from None
    return directory


def check_file(path: Path) -> Path:
    """Make sure ``path`` can be written (its folder created if needed, the file not a folder); return it."""
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder; name a file")
    check_directory(path.parent, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"cannot write {path}: permission denied")
    return path

