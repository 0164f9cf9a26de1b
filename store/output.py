"""Where results go: every file dicegraph writes (records, diagrams, charts) goes through here.

A diagram or an archive is written after the work that produces it (a solve
may take minutes), so the place is checked first: its folder is created, and
a scratch file is written and removed there, which catches what permission
bits do not show (an immutable folder, a full or read-only file system).

A file is written whole (to a scratch file beside it, then moved over it), through
a symbolic link to the link's target (the link stays a link), and never over
anything that is not a regular file: a device (``/dev/null``), a FIFO, a socket or
a folder named as the output is refused in one line, not replaced.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> check_file(folder / "new" / "x.png") == folder / "new" / "x.png"
True
>>> _ = (folder / "x.png").write_text("")
>>> check_file(folder / "x.png" / "y.png")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicegraph.store.output.OutputError: cannot write .../x.png/y.png: .../x.png is a file, not a folder
>>> import os
>>> written = write_file(folder / "w.txt", "one")
>>> os.symlink(written, folder / "link.txt")
>>> write_file(folder / "link.txt", "two") == written, written.read_text(), (folder / "link.txt").is_symlink()
(True, 'two', True)
>>> write_file(folder / "w.txt", "three", new=True)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
dicegraph.store.output.OutputError: cannot write .../w.txt: it exists already; name a new file
>>> write_file(Path(os.devnull), "lost")
Traceback (most recent call last):
...
dicegraph.store.output.OutputError: cannot write /dev/null: it is a character device, not a regular file; name a file
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dicegraph.graphs.errors import DicegraphError


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


KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))  # what a path can be besides a regular file


def target_of(path: Path) -> Path:
    """Return the file that writing ``path`` writes: ``path`` itself, or the end of the symbolic links it names;
    raise OutputError when that is anything but a regular file or a name not taken yet."""
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a new name (a folder in its way is refused when checked)
        return target
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None
    for test, kind in KINDS:
        if test(mode):
            raise OutputError(f"cannot write {path}: it is {kind}, not a regular file; name a file")
    return target


def check_file(path: Path, *, new: bool = False) -> Path:
    """Make sure ``path`` can be written (its folder created if needed; a regular file or a new name, not taken
    yet when ``new``); return it."""
    target = target_of(path)
    if new and target.exists():
        raise OutputError(f"cannot write {path}: it exists already; name a new file")
    check_directory(target.parent, path)
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(f"cannot write {path}: permission denied")
    return path


def _new_file_mode() -> int:
    """Return the permission bits a new file gets here (0o666 less the umask)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _link_new(scratch: str, target: Path) -> None:
    """Give the written ``scratch`` file the name ``target``, which must not be taken (FileExistsError if it is,
    also when another process takes it meanwhile, where the file system has hard links)."""
    try:
        os.link(scratch, target)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: the name is checked, then taken
        if target.exists():
            raise FileExistsError(target) from None
        os.replace(scratch, target)
        return
    os.unlink(scratch)


def write_file(path: Path, data: str | bytes, *, new: bool = False) -> Path:
    """Write ``data`` to ``path`` whole and return the file written (the link's target when ``path`` is a link).

    The data goes to a scratch file beside the target, then takes its place, so a
    process stopped meanwhile leaves the file as it was. A file replaced keeps its
    permission bits. With ``new`` the file must not exist yet, also not when the
    write ends (another process creating it meanwhile is not overwritten).
    """
    target = target_of(Path(path))
    check_file(Path(path), new=new)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    descriptor, scratch = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(scratch, mode)
        if new:
            _link_new(scratch, target)
        else:
            os.replace(scratch, target)
    except FileExistsError:
        Path(scratch).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: it exists already; name a new file") from None
    except OSError as error:
        Path(scratch).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    return target


def drawn_into(directory: Path, draw: Callable[[Path], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Return what ``draw(folder)`` drew (a game's ``charts`` hook: dicts naming each ``file``), drawn in a scratch
    folder and then written into ``directory`` by :func:`write_file`, each ``file`` naming its new place: a hook
    writes no file of the user's folder itself."""
    check_directory(directory)
    with tempfile.TemporaryDirectory(prefix=".dicegraph-drawing-") as scratch:
        drawn = draw(Path(scratch))
        moved = []
        for item in drawn:
            made = Path(item["file"])
            target = directory / made.name
            write_file(target, made.read_bytes())
            moved.append({**item, "file": str(target)})
    return moved
