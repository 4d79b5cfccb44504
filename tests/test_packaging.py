"""The package as users get it: metadata that builds without warnings (the licence as an SPDX
expression; a TOML table is deprecated, and setuptools printed its warning block at every
install), and a wheel that installs into a clean environment and runs."""

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def test_licence_is_an_spdx_expression_and_setuptools_reads_it():
    project = tomllib.loads(PYPROJECT.read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert not any(c.startswith("License ::") for c in project["project"].get("classifiers", []))
    requires = project["build-system"]["requires"]
    assert any(r.replace(" ", "").startswith("setuptools>=") and
               tuple(map(int, r.split(">=")[1].split(".")[:1])) >= (77,) for r in requires)


@pytest.mark.slow
def test_the_wheel_installs_and_runs_without_the_repository(tmp_path):
    """The sdist and the wheel build from a copy of the sources; the wheel, installed into a
    fresh virtual environment (its dependencies lent from this one's site-packages, so no
    download), runs the command line from a folder outside the repository."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "*.egg-info", "build", "dist", "__pycache__", "results", ".pytest_cache"))
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "-w", str(dist), "-q"])
    run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
         f"build_meta.build_sdist({str(dist)!r})"], cwd=source)
    [wheel], [sdist] = dist.glob("*.whl"), dist.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "plausible/py.typed" in names and "plausible/cli/__init__.py" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any(name.startswith(("tests/", "notebooks/", "benchmarks/")) for name in names)
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/pyproject.toml") for name in archive.getnames())
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         str(wheel)])
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                        "['purelib'])"]).strip())
    (purelib / "lent_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "work"
    work.mkdir()
    where = run([str(python), "-c", "import plausible; print(plausible.__file__)"], cwd=work)
    assert where.startswith(str(purelib))
    plausible = str(env / "bin" / "plausible")
    assert "plausible 0." in run([plausible, "--version"], cwd=work)
    assert "dawid-skene" in run([plausible, "models"], cwd=work)
    (work / "votes.csv").write_text("item,a,b\n1,3,1\n2,0,4\n3,2,2\n")
    run([plausible, "aggregate", "votes.csv", "--draws", "50", "--chains", "2", "--no-progress",
         "-o", "out.csv"], cwd=work)
    assert (work / "out.csv").read_text().startswith("item,top_class")


def run(command, cwd=None) -> str:
    """``command``'s standard output; its standard error in the failure's message."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_core_runs_without_the_cluster_extra(tmp_path):
    """Without ``distributed`` (the ``cluster`` extra) everything in one process works, and
    asking for workers says which extra to install, in one line."""
    script = """
import sys
sys.modules["distributed"] = None  # as if not installed: importing it raises ImportError
import pandas as pd
import plausible as pl
from plausible import cli
frame = pd.DataFrame({"task": [1, 1, 2, 2, 3], "worker": list("ababa"), "label": list("xxyxy")})
pl.aggregate(frame, "dawid-skene", draws=50, chains=2, seed=0).report("report.html")
frame.to_csv("labels.csv", index=False)
sys.exit(cli.main(["aggregate", "labels.csv", "--model", "dirichlet", "--workers", "2",
                   "--draws", "50", "--no-progress"]))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 2, done.stderr[-3000:]
    assert (tmp_path / "report.html").exists()
    assert done.stderr.strip() == ("plausible: error: running on a Dask cluster needs the "
                                   "distributed package: pip install 'plausible[cluster]'")
    core = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    assert not any("distributed" in requirement for requirement in core)
