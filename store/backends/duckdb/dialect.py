"""DuckDB through duckdb-engine, with SQLAlchemy's statement cache on (``duckdb://`` URLs resolve here: store/db.py).

duckdb-engine 0.17 declares ``supports_statement_cache = False``, the safe
default of a third-party dialect, so SQLAlchemy compiled every statement
again at each execution: 2.2 ms of DuckDB's 11 ms a statement on Pig's
solve (docs/performance.md). Its SQL is PostgreSQL's (the dialect is
psycopg2's with DuckDB's connection, types and identifier quoting), whose
compiler SQLAlchemy caches; nothing of duckdb-engine's compiles a statement
differently from one execution to the next. With the cache on, Pig to 30's
solve took 13.4 and 12.9 s against 16.1 and 15.7 s (runs in turn, the same
values).
"""

from __future__ import annotations

from duckdb_engine import Dialect


class DuckDBDialect(Dialect):
    """duckdb-engine's dialect, its compiled statements cached."""

    supports_statement_cache = True
