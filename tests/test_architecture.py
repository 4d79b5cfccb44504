"""The package's floors (``[tool.importlinter]`` in pyproject.toml): every import points down,
and no package has an import cycle, function-level imports included; one driver samples; the
code passes ruff (``[tool.ruff]``)."""

import ast
import subprocess
import sys
from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).parents[1]


def test_imports_point_down_the_floors_without_cycles(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_ruff_passes_on_the_package_the_tests_and_the_benchmarks():
    """``ruff check`` with the rules of ``[tool.ruff.lint]`` (syntax errors, pyflakes): a second
    or so, and ruff is a dev dependency, so a missing one fails here rather than skipping."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "plausible",
                             "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


PACKAGE = ROOT / "plausible"
DRIVER = PACKAGE / "inference" / "driver.py"


def test_one_warm_up_loop_and_one_trace_assembly():
    """Only the driver loops over warm-up sweeps (a ``range`` whose bounds read ``tune``) and
    builds a DataTree from groups (``DataTree.from_dict``); every sampler is a kernel, every
    trace comes out of :func:`plausible.inference.driver.assemble`."""
    loops, assemblies = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            if (isinstance(node.func, ast.Name) and node.func.id == "range"
                    and any(isinstance(n, ast.Name) and n.id == "tune"
                            for arg in node.args for n in ast.walk(arg))):
                loops.append(path)
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "from_dict"
                    and isinstance(func.value, ast.Attribute) and func.value.attr == "DataTree"):
                assemblies.append(path)
    assert loops == [DRIVER]
    assert assemblies == [DRIVER]
