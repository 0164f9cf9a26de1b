"""What the store does unless told otherwise, in one place that imports nothing: the front ends show these in their
options' help before anything is opened, so that ``dicegraph --help`` loads no driver, SQLAlchemy or numpy.

Each is used where its work is done (``store/db.py``, ``store/load.py``, ``store/query.py``, ``store/render.py``,
``store/report.py``) and shown through :mod:`dicegraph.frontends`.
"""

from __future__ import annotations

DEFAULT_URL = "sqlite:///dicegraph.db"  # the database a command opens unless given --db or $ENV_VAR
ENV_VAR = "DICEGRAPH_DB"
MAX_EDGES = 50_000_000  # larger builds need force: at store.load.BYTES_PER_EDGE, tens of GiB
DEFAULT_TIMEOUT = 60.0  # seconds a query may run unless told otherwise
MAX_NODES = 1000  # the diagrams' size guard: larger ones need --force
RENDERERS = ("auto", "dot", "python")  # who draws a PNG or SVG: Graphviz's dot, or pydot's pure-Python route
DEFAULT_DPI = 96
DEFAULT_SEED = 1  # of the Monte Carlo games a report plays
