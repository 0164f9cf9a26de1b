"""Whether a process of this machine still runs: the cluster's, a writer's, a work table's owner."""

from __future__ import annotations

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
