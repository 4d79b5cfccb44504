"""The documentation site (docs/): it builds with warnings as errors, the docstrings it
renders exist and cite papers, not spec pages, and the getting-started page's Python blocks
run as written."""

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def api_packages() -> list[str]:
    """docs/conf.py's API_PACKAGES (read, not imported: importing conf writes the API pages)."""
    tree = ast.parse((DOCS / "conf.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "API_PACKAGES":
            return ast.literal_eval(node.value)
    raise AssertionError("docs/conf.py defines no API_PACKAGES")


def public_objects(module):
    """(name, object) of what a package exports (its ``__all__``, else the functions and
    classes it defines), as the API reference lists them (docs/conf.py)."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name, value in vars(module).items()
                 if not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
                 and value.__module__ == module.__name__]
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in names]


def own_members(name: str, cls):
    """(name, function) of the public methods and properties a class defines itself, which
    the API reference renders (autodoc leaves out a member without a docstring)."""
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(function):
            yield f"{name}.{attr}", function


def test_every_public_function_and_class_has_a_docstring():
    missing = []
    for package in api_packages():
        for name, value in public_objects(importlib.import_module(package)):
            # a module exported by a package (plausible.models.dawid_skene): its page is its
            # docstring and its own public functions and classes
            inner = public_objects(value) if inspect.ismodule(value) else [(name, value)]
            for inner_name, obj in inner:
                if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                    continue
                members = own_members(inner_name, obj) if inspect.isclass(obj) else []
                for documented, function in [(inner_name, obj), *members]:
                    if not (function.__doc__ or "").strip():
                        missing.append(documented)
            if inspect.ismodule(value) and not (value.__doc__ or "").strip():
                missing.append(name)
    missing = sorted(missing)
    assert not missing, f"no docstring: {missing}"


def test_no_docstring_refers_to_a_spec_page():
    """The docstrings cite papers (docs/references.md); the spec pages they once
    pointed to are not part of the package."""
    pattern = re.compile(r"spec 0|spec §|specs/", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "plausible").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path):
    """sphinx-build -W from the sources as committed: the notebooks from their stored
    outputs (nothing executed), the API pages from the docstrings, the CLI page from the
    parser. About 20 s on 2 cores."""
    out = tmp_path / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-5000:] + build.stderr[-10000:]

    def page(name: str) -> str:
        path = out / name
        assert path.is_file(), f"{name} was not built"
        return path.read_text(encoding="utf-8")

    assert "Getting started" in page("index.html")
    assert "From a labels table to a checked posterior" in page("getting-started.html")
    assert "Dawid" in page("models/dawid-skene.html")
    assert "R-hat" in page("diagnostics.html")
    cli = page("cli.html")
    assert "aggregate" in cli and "--reliability" in cli and "--max-seconds" in cli
    assert "plausible.aggregation.aggregate" in page("api/generated/plausible.aggregation.aggregate.html")
    assert "build" in page("api/generated/plausible.models.dawid_skene.html")
    assert "Dentistry" in page("notebooks/dentistry.html")
    assert "<img" in page("notebooks/dentistry.html")  # the stored figures
    # sphinx-argparse and docstrings parsed apart from Sphinx show errors on the page
    # instead of warning: none may be left
    shown = [path.relative_to(out).as_posix() for path in out.rglob("*.html")
             if "system-message" in path.read_text(encoding="utf-8")]
    assert not shown, f"reStructuredText errors shown on {shown}"


def getting_started_blocks(public_data: bool) -> list[tuple[int, str]]:
    """(number, code) of docs/getting-started.md's Python blocks that load a public data set
    (``pl.data.load_``), or of those that do not."""
    blocks = PYTHON_BLOCK.findall((DOCS / "getting-started.md").read_text(encoding="utf-8"))
    return [(number, block) for number, block in enumerate(blocks, start=1)
            if ("pl.data.load_" in block) == public_data]


def run_blocks(blocks: list[tuple[int, str]]) -> None:
    """The blocks in order, in one namespace: later blocks use earlier names, as a reader would."""
    matplotlib.use("Agg")
    namespace = {"__name__": "getting_started"}
    for number, block in blocks:
        code = compile(block, f"docs/getting-started.md python block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the docs are ours


def test_getting_started_blocks_run(tmp_path, monkeypatch):
    """The page's blocks that need no public data set, in order: the labels walkthrough,
    model choice and saving, comparison, the samplers in PyMC, decisions from the posterior."""
    monkeypatch.chdir(tmp_path)  # files the page writes land here
    blocks = getting_started_blocks(public_data=False)
    assert blocks and "pl.aggregate(df" in blocks[0][1]
    run_blocks(blocks)
    assert (tmp_path / "report.html").is_file()
    assert (tmp_path / "labels-dirichlet.nc").is_file()


@pytest.mark.slow
def test_getting_started_public_data_blocks_run(data_home, tmp_path, monkeypatch):
    """The page's blocks that load a public data set (CIFAR-10H's votes, the dermatology
    rankings), in order: sampling CIFAR-10H's 10,000 items takes a minute or more, so they run
    in make test-all."""
    monkeypatch.chdir(tmp_path)
    blocks = getting_started_blocks(public_data=True)
    assert blocks
    run_blocks(blocks)
