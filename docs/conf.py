"""Sphinx configuration of plausible's documentation site.

Build it with ``sphinx-build -W docs docs/_build/html`` (the test suite does so into a
temporary folder, tests/test_docs.py). Nothing is executed: the notebooks are rendered from
their stored outputs, and the API pages are generated from the packages' ``__all__``.

Generated at build time, never committed (see .gitignore): ``api/plausible.*.rst`` (one page
per public package, written below) and ``api/generated/`` (autosummary's page per object).
"""

import importlib
import inspect
import sys
from pathlib import Path

from sphinx.pycode import ModuleAnalyzer

import plausible

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # cli_parser, the parser as the CLI reference shows it

project = "plausible"
author = "the plausible developers"
copyright = "the plausible developers"
release = version = plausible.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinxarg.ext",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# The notebooks (docs/notebooks links to the repository's notebooks/) are shown with the
# outputs stored in them: the test suite executes them, the documentation does not.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# The API reference: numpy-style docstrings, one page per public object.
autosummary_generate = True
autodoc_typehints = "none"  # the signatures are long; the docstrings say the types
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True  # a default shows as written (np.inf, not its repr)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Documented members are rendered; the `*args` of a class's signature stay unlinked.
nitpicky = False

html_theme = "pydata_sphinx_theme"
html_title = f"plausible {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
html_copy_source = False

# The public API: each package (or module) gets a page listing what its ``__all__`` exports
# (a module without one: its public functions and classes). ``plausible.maths`` (pure maths
# below everything) and ``plausible.report`` / ``plausible.cli`` (the HTML page and the
# command line, documented as such) stay out; ``plausible.testing`` is a deprecated alias of
# ``plausible.evaluation`` and is only mentioned.
API_PACKAGES = [
    "plausible.aggregation",
    "plausible.comparison",
    "plausible.data",
    "plausible.models",
    "plausible.inference",
    "plausible.diagnostics",
    "plausible.metrics",
    "plausible.calibration",
    "plausible.evaluation",
    "plausible.active",
    "plausible.conformal",
    "plausible.plots",
    "plausible.distributed",
    "plausible.distributed.cluster_chain",
]


def public_names(module) -> list[str]:
    """What a package exports: its ``__all__``, else the functions and classes it defines."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
            and value.__module__ == module.__name__]


def _kind(value) -> str:
    if inspect.ismodule(value):
        return "modules"
    if inspect.isclass(value):
        return "exceptions" if issubclass(value, BaseException) else "classes"
    if callable(value):
        return "functions"
    return "constants"


# autosummary picks each page's template by the object's type (docs/_templates/autosummary)
SECTIONS = {"modules": "Modules", "classes": "Classes", "exceptions": "Exceptions",
            "functions": "Functions", "constants": "Constants"}


def _constant_home(package, item: str) -> str:
    """The module whose source documents a re-exported constant (``#:`` or a string after
    it), so that autodoc finds its docstring: ``~plausible.models.registry.MEANINGS``."""
    value = getattr(package, item)
    for name, module in sorted(sys.modules.items()):
        if (name.startswith(package.__name__ + ".") and module is not None
                and vars(module).get(item) is value
                and ("", item) in ModuleAnalyzer.for_module(name).find_attr_docs()):
            return f"~{name.removeprefix(package.__name__ + '.')}.{item}"
    return item


def package_page(name: str) -> str:
    module = importlib.import_module(name)
    groups: dict[str, list[str]] = {kind: [] for kind in SECTIONS}
    for item in sorted(public_names(module), key=str.lower):
        kind = _kind(getattr(module, item))
        groups[kind].append(_constant_home(module, item) if kind == "constants" else item)
    lines = [name, "=" * len(name), "", f".. automodule:: {name}", "   :no-members:", "",
             f".. currentmodule:: {name}", ""]
    for kind, title in SECTIONS.items():
        if not groups[kind]:
            continue
        lines += [title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated/",
                  "   :nosignatures:"]
        lines += [""] + [f"   {item}" for item in groups[kind]] + [""]
    return "\n".join(lines)


def _resolves(name: str) -> bool:
    """Whether the dotted ``name`` is a module, or an attribute of one, that imports now."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
        return True
    return False


def drop_stale_pages(folder: Path) -> None:
    """Delete the pages an earlier build generated for packages, modules or objects that no
    longer exist (a moved module): Sphinx reads every page in the folder, and a stale one
    fails the build."""
    for path in folder.glob("plausible.*.rst"):
        if path.stem not in API_PACKAGES:
            path.unlink()
    for path in (folder / "generated").glob("*.rst"):
        if not _resolves(path.stem):
            path.unlink()


def write_api_pages() -> None:
    """Write api/<package>.rst, touching a file only when its text changed (so an
    incremental build rebuilds only what changed), after dropping stale pages."""
    folder = HERE / "api"
    drop_stale_pages(folder)
    for name in API_PACKAGES:
        path = folder / f"{name}.rst"
        text = package_page(name)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def drop_type_docstring(app, what, name, obj, options, lines):
    """A constant without a docstring of its own shows none (autodoc would show its type's:
    ``dict``'s, ``tuple``'s)."""
    own = type(obj).__doc__
    if what in ("data", "attribute") and isinstance(own, str) and not inspect.isclass(obj):
        if "\n".join(lines).strip() == inspect.cleandoc(own):
            lines.clear()


def setup(app):
    app.connect("autodoc-process-docstring", drop_type_docstring)


write_api_pages()
