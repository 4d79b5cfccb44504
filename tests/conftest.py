"""Shared pytest fixtures.

Tests that read the public data sets take the ``data_home`` fixture: it resolves
``PLAUSIBLE_DATA`` and skips the test with the reason when the folder is absent,
so the core suite runs anywhere on small data the tests generate themselves.
"""

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def data_home() -> Path:
    root = os.environ.get("PLAUSIBLE_DATA")
    if not root:
        pytest.skip("PLAUSIBLE_DATA is not set: public data sets unavailable")
    path = Path(root)
    if not path.is_dir():
        pytest.skip(f"PLAUSIBLE_DATA={root} is not a directory: public data sets unavailable")
    return path


def pytest_collection_modifyitems(config, items):
    """Run the notebooks first: they are the longest cases (one to three minutes each), and
    under ``pytest -n auto`` starting them early keeps every worker busy until the end."""
    items.sort(key=lambda item: item.get_closest_marker("notebook") is None)
