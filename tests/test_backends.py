"""The same statements on DuckDB: headline numbers equal SQLite's (PostgreSQL comes with the backends issue)."""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import pytest

from graphs import get_game
from graphs.protocol import resolve_params
from store.db import open_database
from store.report import game_report

if importlib.util.find_spec("duckdb_engine") is None:  # CI installs the extra: there, a missing one fails
    if os.environ.get("CI"):
        raise RuntimeError("CI must test DuckDB: the test extra brings duckdb-engine")
    pytest.skip("DuckDB needs the duckdb extra: pip install -e '.[duckdb]'", allow_module_level=True)


@pytest.mark.parametrize("name", ["jackpot", "shut-the-box"])
def test_duckdb_reports_what_sqlite_reports(name: str, tmp_path: Path) -> None:
    game = get_game(name)
    params = resolve_params(game, {})
    reports = {
        url.split(":")[0]: game_report(open_database(url, create=True), game, params)
        for url in (f"sqlite:///{tmp_path / 'a.db'}", f"duckdb:///{tmp_path / 'a.duckdb'}")
    }
    values = {backend: {row["name"]: row["value"] for row in report["policies"]} for backend, report in reports.items()}
    assert values["sqlite"].keys() == values["duckdb"].keys()
    for policy, value in values["sqlite"].items():
        assert math.isclose(values["duckdb"][policy], value, rel_tol=1e-12), policy
