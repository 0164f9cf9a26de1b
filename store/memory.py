"""How much memory a backend may use (DuckDB's ``--memory``): a size, or a share of this machine's memory."""

from __future__ import annotations

import os

from dicegraph.store.errors import DatabaseError

MEMORY_VAR = "DICEGRAPH_MEMORY"  # the memory DuckDB may use (--memory): a size such as 8GB, or a share such as 50%
DEFAULT_MEMORY = "50%"  # of this machine's memory: DuckDB spills to its temporary folder past it, rather than grow
MEMORY_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
                "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def memory_bytes(text: str | None = None) -> int:
    """Return the memory DuckDB may use, in bytes: ``text`` (a size such as ``8GB``, ``512MiB``, or a share of
    this machine's memory such as ``50%``), else ``$DICEGRAPH_MEMORY``, else :data:`DEFAULT_MEMORY`.

    >>> memory_bytes("8GB"), memory_bytes("1.5 GiB")
    (8000000000, 1610612736)
    >>> memory_bytes("100%") == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    True
    """
    text = (text or os.environ.get(MEMORY_VAR) or DEFAULT_MEMORY).strip()
    how = f"memory {text!r}: give a size such as 8GB or 512MiB, or a share of this machine's memory such as 50%"
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 < share <= 100:
                raise ValueError
            return int(share / 100 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        number = text.rstrip("BbKkMmGgTtIi ")
        unit = text[len(number):].strip().upper()
        size = int(float(number) * MEMORY_UNITS[unit])
    except (ValueError, KeyError):
        raise DatabaseError(how) from None
    if size < 2**26:  # below 64 MiB DuckDB cannot even load a graph
        raise DatabaseError(f"{how} (at least 64MiB)")
    return size
