"""The SQL console's bounds: how many statements at once, for how long, and how much of their rows a page shows.

They keep the console from taking the explorer down with it: its statements
never hold every thread that serves the pages, and a huge result is cut, with
a line saying so. ``dicegraph serve --sql-slots --sql-timeout`` set the first two.
"""

import os

# statements the console runs at once: half the processors (at least one), so the pages keep the other half and
# the server's other threads; one more is told at once that the console is busy
SQL_SLOTS = max(1, (os.cpu_count() or 2) // 2)
SQL_TIMEOUT = 10.0  # seconds a statement of the console may run
MAX_ROWS = 1000  # rows a page shows
MAX_CELL_CHARS = 10_000  # the most of one value a page shows (a BLOB as hex, a long text)
MAX_RESULT_CHARS = 2_000_000  # the most text of values one page holds: past it, rows are cut
