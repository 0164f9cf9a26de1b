"""Running dicegraph as a real process, for the tests of concurrency and interruption."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dicegraph(*args: str) -> list[str]:
    """The command line of dicegraph run by this interpreter, as a user's shell would start it."""
    return [sys.executable, "-c", "from cli import main; main(prog_name='dicegraph')", *args]


def spawn(*args: str) -> subprocess.Popen:
    """Start ``dicegraph ARGS`` in the background (stdout and stderr captured as text)."""
    return subprocess.Popen(dicegraph(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


DRIVER_LIBRARIES = {"sqlite": "_sqlite3", "duckdb": "duckdb", "postgresql": "libpq"}


def wait_for_driver(process: subprocess.Popen, db_url: str, limit: float = 120) -> None:
    """Wait until ``process`` has loaded the database driver of ``db_url`` (Linux: its memory map names the
    driver's library), so that a signal sent next finds it past start-up, however loaded the machine is."""
    library = DRIVER_LIBRARIES[db_url.split(":", 1)[0].split("+", 1)[0]]
    deadline = time.monotonic() + limit
    maps = Path(f"/proc/{process.pid}/maps")
    while time.monotonic() < deadline and process.poll() is None:
        if library in maps.read_text():
            return
        time.sleep(0.05)


def stopped_query(db_url: str, sql: str, how: str, after: float = 2) -> tuple[int, str, float]:
    """Run ``query SQL`` and stop it: ``how`` is ``ctrl-c`` (SIGINT ``after`` seconds once the process has
    loaded its database driver) or ``timeout`` (--timeout 2).

    Returns the exit status, stderr and the seconds the process lived.
    """
    process = spawn("--db", db_url, "query", "--timeout", "0" if how == "ctrl-c" else "2", sql)
    started = time.monotonic()
    if how == "ctrl-c":
        wait_for_driver(process, db_url)
        time.sleep(after)
        process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr, time.monotonic() - started
