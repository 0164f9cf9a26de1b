"""What the front ends (the command line, ``cli.py``, and the explorer, ``web/``) take from below the session, in
one place: the defaults and limits their options show, the seats of a match, the errors they turn into a line
or a page, the file checks done before any work, and the local Spark cluster ``dicegraph spark`` runs. Each name
keeps its one home in the store; a front end imports it from here and everything else through
:func:`dicegraph.open`, never from the store (``tests/test_imports.py`` keeps it so).

>>> from dicegraph import frontends
>>> frontends.DEFAULT_URL, frontends.SEATS[0]
('sqlite:///dicegraph.db', 'first')
"""

from __future__ import annotations

from dicegraph import names_on_first_use
from dicegraph.graphs.listing import game_listing
from dicegraph.store.backends.spark.cluster import DEFAULT_FOLDER, DEFAULT_PORT, MOST_WORKERS, Cluster, answers
from dicegraph.store.backends.spark.cluster import WORKERS as SPARK_WORKERS
from dicegraph.store.backends.spark.cluster import running as running_processes
from dicegraph.store.backends.spark.cluster import start as start_cluster
from dicegraph.store.backends.spark.cluster import stop as stop_cluster
from dicegraph.store.defaults import (DEFAULT_DPI, DEFAULT_SEED, DEFAULT_TIMEOUT, DEFAULT_URL, ENV_VAR, MAX_EDGES,
                                      MAX_NODES, RENDERERS)
from dicegraph.store.errors import DatabaseError, FilesReachable, NotFound, ReadOnly, database_failure
from dicegraph.store.memory import DEFAULT_MEMORY, MEMORY_VAR, memory_bytes
from dicegraph.store.output import check_file, write_file
from dicegraph.store.seats import SEATS

# what needs SQLAlchemy is imported when first used (``frontends.shown_url``), so that the options' help and
# ``--version`` load no driver: name -> (its home, its name there)
_LATER = {
    "DriverError": ("sqlalchemy.exc", "DBAPIError"),
    "in_memory_url": ("dicegraph.store.db", "in_memory_url"),
    "shown_url": ("dicegraph.store.db", "shown_url"),
}
__getattr__ = names_on_first_use(__name__, _LATER, globals())


__all__ = [
    "DEFAULT_DPI", "DEFAULT_FOLDER", "DEFAULT_MEMORY", "DEFAULT_PORT", "DEFAULT_SEED", "DEFAULT_TIMEOUT",
    "DEFAULT_URL", "ENV_VAR", "MAX_EDGES", "MAX_NODES", "MEMORY_VAR", "MOST_WORKERS", "RENDERERS", "SEATS",
    "SPARK_WORKERS",
    "Cluster", "DatabaseError", "DriverError", "FilesReachable", "NotFound", "ReadOnly",
    "answers", "check_file", "database_failure", "game_listing", "in_memory_url",
    "memory_bytes", "running_processes", "shown_url", "start_cluster", "stop_cluster", "write_file",
]
