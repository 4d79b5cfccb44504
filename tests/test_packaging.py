"""The package's metadata builds without warnings: the licence as an SPDX expression (a TOML
table is deprecated, and setuptools printed its warning block at every install)."""

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_licence_is_an_spdx_expression_and_setuptools_reads_it():
    project = tomllib.loads(PYPROJECT.read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert not any(c.startswith("License ::") for c in project["project"].get("classifiers", []))
    requires = project["build-system"]["requires"]
    assert any(r.replace(" ", "").startswith("setuptools>=") and
               tuple(map(int, r.split(">=")[1].split(".")[:1])) >= (77,) for r in requires)
