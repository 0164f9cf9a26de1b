"""Apache Spark SQL as a dicegraph database: the dialect (``spark://HOST:PORT/DATABASE``, :mod:`dicegraph.store.spark.dialect`)
and a local standalone cluster to run it on (:mod:`dicegraph.store.spark.cluster`)."""

import os


def process_runs(pid: int) -> bool:
    """Return whether process ``pid`` of this machine is running (a signal 0 reaches it, or it is another user's).

    >>> process_runs(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
