"""The second hostile run (issue 36): each family of failure it found, kept fixed by a test.

Each test stands for a family, not one input: concurrent diagrams on both
drawing routes, the SQL console beside the pages, files read through SQL on
every backend, comparisons that mean nothing, work tables shared by runs,
tracebacks, and pages that fail or mislead.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from store.render import available_renderers
from tests.processes import served


def run(db: str, *args: str):  # noqa: ANN201
    return CliRunner().invoke(main, ["--db", db, *args])


def assert_one_line_error(result, *phrases: str) -> None:  # noqa: ANN001
    """The command failed with status 1 and one line on stderr holding every phrase."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for phrase in phrases:
        assert phrase in lines[0], (phrase, lines[0])


@pytest.fixture(scope="module")
def small_jackpot(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a SQLite file holding Jackpot with 4 cells, solved with every agent evaluated (graph 1)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'jackpot.db'}"
    assert run(url, "report", "jackpot", "-p", "cells=4", "-n", "0").exit_code == 0
    return url


def fetch(address: str) -> tuple[int, bytes]:
    """Return the status and body of a GET of ``address`` (an error status too)."""
    try:
        with urllib.request.urlopen(address, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.parametrize("route", ["python", "dot"])
def test_simultaneous_diagrams_never_take_the_server_down(small_jackpot: str, route: str, tmp_path: Path) -> None:
    """Sixteen position diagrams asked for at once, four at a time in eight threads, on each drawing route: every
    one is drawn, alike, and the server lives on. The pure-Python route is forced by a PATH without Graphviz."""
    if route not in available_renderers():
        if os.environ.get("CI"):
            raise RuntimeError(f"CI must test the {route!r} drawing route")
        pytest.skip(f"the {route!r} drawing route is not installed here")
    env = dict(os.environ, PATH=str(tmp_path)) if route == "python" else None  # no dot on that PATH
    answers: list[tuple[int, bytes]] = []
    with served(small_jackpot, env=env) as address:
        def ask() -> None:
            for key in ("0", "0/1-2"):
                answers.append(fetch(f"{address}/graphs/1/positions/{key}.svg"))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert fetch(f"{address}/.json")[0] == 200
    assert len(answers) == 16 and {status for status, _ in answers} == {200}
    assert len({body for _, body in answers}) == 2  # one drawing per position, the same every time
    assert all(body.lstrip().startswith(b"<?xml") or b"<svg" in body[:400] for _, body in answers)
