"""The package's floors (``[tool.importlinter]`` in pyproject.toml): every import points down,
and no package has an import cycle, function-level imports included."""

from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).parents[1]


def test_imports_point_down_the_floors_without_cycles(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0
