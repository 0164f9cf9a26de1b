"""Running dicegraph as a real process, for the tests of concurrency and interruption."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dicegraph(*args: str) -> list[str]:
    """The command line of dicegraph run by this interpreter, as a user's shell would start it."""
    return [sys.executable, "-c", "from dicegraph.cli import run; run()", *args]


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


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(db_url: str, limit: float = 60, env: dict[str, str] | None = None, options: tuple[str, ...] = ()) -> Iterator[str]:
    """Run ``dicegraph serve [OPTIONS]`` on ``db_url`` at a free port (in ``env``, None: this one's); yield its address
    once it answers, stop it after."""
    import urllib.request

    import tempfile

    port = free_port()
    address = f"http://127.0.0.1:{port}"
    # its output goes to a file, not a pipe: a pipe nobody reads fills up and stops the server mid-write
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(dicegraph("--db", db_url, "serve", "--port", str(port), *options), stdout=log,
                                  stderr=log, text=True, cwd=ROOT, env=env)
        try:
            deadline = time.monotonic() + limit
            while True:
                try:
                    with urllib.request.urlopen(f"{address}/.json", timeout=5):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        raise RuntimeError(f"dicegraph serve did not answer: {log.read().strip()}") from None
                    time.sleep(0.1)
            yield address
            if server.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"dicegraph serve died (status {server.returncode}): {log.read().strip()[-2000:]}")
        finally:
            server.terminate()
            server.wait(timeout=10)
