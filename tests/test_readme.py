"""Every Python block of the README runs as written, in order, in one namespace (later blocks
use earlier names, as a reader would). Blocks that load a public data set need
``PLAUSIBLE_DATA``; without it the test skips with that reason. The walkthrough the README
links to is docs/getting-started.md, whose blocks tests/test_docs.py runs."""

import os
import re
from pathlib import Path

import matplotlib
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def python_blocks() -> list[str]:
    return BLOCK.findall(README.read_text())


def test_readme_has_the_front_door_first():
    blocks = python_blocks()
    assert blocks and "pl.aggregate(df" in blocks[0]


def test_every_python_block_runs(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # files the README writes land here
    data = os.environ.get("PLAUSIBLE_DATA")
    namespace = {"__name__": "readme"}
    for number, block in enumerate(python_blocks(), start=1):
        if "pl.data.load_" in block and not (data and os.path.isdir(data)):
            pytest.skip(f"README python block {number} loads a public data set: PLAUSIBLE_DATA "
                        "is not set (the blocks before it ran)")
        code = compile(block, f"README.md python block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the README is ours
