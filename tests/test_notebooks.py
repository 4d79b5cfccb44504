"""Execute every notebook in ``notebooks/`` end to end (the Bayesian-workflow case studies).

Each notebook runs in a fresh kernel from this environment; an exception in any cell,
including a failed ``assert`` on its numbers, fails the test. Executed copies are written
to pytest's temporary folder, never over the committed notebooks.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
NEEDS_DATA = {"cifar10h_certainty.ipynb", "ratings_certainty.ipynb",
              "calibration_disagreement.ipynb", "dawid_skene.ipynb", "dentistry.ipynb",
              "dermatology.ipynb", "dermatology_pairwise.ipynb", "difficulty_snow2008.ipynb",
              "model_comparison.ipynb", "ordinal_snow2008.ipynb",
              "resnet18_cifar10h.ipynb"}


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.timeout(1800)  # pytest-timeout: dawid_skene took 14 minutes on 2 busy cores
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, request):
    if path.name in NEEDS_DATA:
        request.getfixturevalue("data_home")  # skips with the reason when data are absent
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(notebook, tmp_path / path.name)
