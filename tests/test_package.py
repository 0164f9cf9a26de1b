"""One installed package: the wheel built from the repository holds ``dicegraph`` and nothing beside it, every
module of the repository's folders is in it under ``dicegraph.``, and the old top-level names are gone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_imports import ROOT, module_name

OLD_NAMES = ("cli", "graphs", "store", "web", "migrations")  # installed at the top level before issue 62
FOLDERS = ("dicegraph", "graphs", "store", "web", "migrations")  # the folders pyproject.toml's package-dir maps


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return the wheel built from a copy of the repository (a build writes beside its sources, not here)."""
    source = tmp_path_factory.mktemp("source") / "dicegraph"
    shutil.copytree(ROOT, source, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "tests"))
    built = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(built),
                    str(source)], check=True, capture_output=True)
    return next(built.glob("dicegraph-*.whl"))


def test_the_wheel_holds_one_package_and_every_module(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"dicegraph", f"{wheel.name.split('-py')[0]}.dist-info"}
    modules = {module_name(path) for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")}
    modules.add(module_name(ROOT / "cli.py"))
    in_wheel = {name.removesuffix(".py").replace("/", ".").removesuffix(".__init__") for name in names
                if name.endswith(".py")}
    assert modules == in_wheel, (modules ^ in_wheel)
    assert "dicegraph/migrations/script.py.mako" in names and "dicegraph/web/templates/base.html" in names
    points = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-py')[0]}.dist-info/entry_points.txt").decode()
    assert "dicegraph = dicegraph.cli:run" in points


def test_installed_into_an_empty_environment_it_adds_one_name(wheel: Path, tmp_path: Path) -> None:
    """The wheel installed (without its dependencies) into a new environment: ``dicegraph`` and its record are all
    that site-packages gains, ``import dicegraph`` finds the installed copy, and no old top-level name imports."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = tmp_path / "env" / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    before = set(path.name for path in site.iterdir())
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True)
    added = {path.name for path in site.iterdir()} - before
    assert {name.split("-")[0] for name in added} == {"dicegraph"} and len(added) == 2, added
    asked = ("import dicegraph, importlib.util; print(dicegraph.__file__); "
             f"print([name for name in {OLD_NAMES!r} if importlib.util.find_spec(name)])")
    found = subprocess.run([python, "-c", asked], check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert found.splitlines() == [str(site / "dicegraph" / "__init__.py"), "[]"]
    assert (tmp_path / "env" / "bin" / "dicegraph").exists()


def test_the_cli_has_one_home() -> None:
    """``dicegraph/cli.py`` is a link to the top-level ``cli.py`` (the design card's place for argument parsing), so
    the two can never differ: an edit through a tool that replaces files (``sed -i``) would have made a copy."""
    link = ROOT / "dicegraph" / "cli.py"
    assert link.is_symlink() and link.resolve() == (ROOT / "cli.py").resolve()
