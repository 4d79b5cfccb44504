"""A model is one folder: a label model added from a temporary package, with nothing but its
folder and its registry entry (an entry point in the group ``plausible.models``), runs through
every layer above the models: the front door, the command line, the predictive check, the
report, the comparison and the choice of what to annotate next. The layers read what the
entry declares; none of them names a model."""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible.models import registry

FAMILY = textwrap.dedent('''
    """One-coin with a flat prior on each annotator's accuracy: a variant of the Dawid-Skene
    family's one-coin member, registered from outside plausible."""

    from plausible.models import dawid_skene
    from plausible.models.dawid_skene import build_one_coin
    from plausible.models.model_entry import ModelEntry


    def build(labels, *, reliability=1.0, **options):
        """One-coin with ``accuracy ~ Beta(1, 1)`` unless ``accuracy_prior`` is given."""
        options.setdefault("accuracy_prior", (1.0, 1.0))
        return build_one_coin(labels, reliability=reliability, **options)


    ENTRIES = (
        ModelEntry("flat-one-coin", build, "labels", "tempering", False,
                   "one-coin with a flat accuracy prior (a test's plug-in)",
                   replicate=dawid_skene.replicate_labels,
                   label_probabilities=dawid_skene.label_probabilities),
    )
''')


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The folder ``flat_one_coin/`` and the metadata that declares its entry point, on
    ``sys.path`` for this test; the registry collected again with it, and without it after."""
    (tmp_path / "flat_one_coin").mkdir()
    (tmp_path / "flat_one_coin" / "__init__.py").write_text(FAMILY)
    info = tmp_path / "flat_one_coin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: flat-one-coin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[plausible.models]\nflat-one-coin = flat_one_coin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.refresh()
    yield tmp_path
    monkeypatch.undo()
    sys.modules.pop("flat_one_coin", None)
    registry.refresh()


def crowd() -> pd.DataFrame:
    """40 items of three classes, four labels each from six annotators, two of them careless."""
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, 40)
    item = np.repeat(np.arange(40), 4)
    worker = np.concatenate([rng.choice(6, 4, replace=False) for _ in range(40)])
    right = rng.random(item.size) < np.where(worker < 2, 0.4, 0.85)
    label = np.where(right, truth[item], rng.integers(0, 3, item.size))
    return pd.DataFrame({"task": item, "worker": worker, "label": label})


def test_a_model_from_its_folder_alone_runs_through_every_layer(plugin, tmp_path):
    assert "flat-one-coin" in pl.models.available("labels").index
    frame = crowd()

    result = pl.aggregate(frame, "flat-one-coin", draws=200, chains=2, seed=0)
    assert result.model == "flat-one-coin"
    np.testing.assert_allclose(result.plausibility.sum("class"), 1.0, rtol=1e-6)
    assert result.certainty().mean() > 0.5

    check = result.check(draws=50)
    assert check.predictive is not None and "Posterior predictive check" in check.text

    page = result.report(tmp_path / "report.html", draws=50)
    assert "flat-one-coin" in page.read_text()

    chosen = result.next_items(5)
    assert 0 < len(chosen) <= 5 and set(chosen["item"]) <= set(frame["task"])
    assert (chosen["certainty_gain"] > 0).all()

    comparison = pl.compare(frame, ["one-coin", "flat-one-coin"], draws=200, chains=2, seed=0)
    assert set(comparison.table.index) == {"one-coin", "flat-one-coin"}

    frame.to_csv(tmp_path / "labels.csv", index=False)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from plausible.cli import main; sys.exit(main())",
         "aggregate", str(tmp_path / "labels.csv"), "--model", "flat-one-coin",
         "--draws", "200", "-o", str(tmp_path / "out.csv"), "--no-progress"],
        capture_output=True, text=True, env={**__import__("os").environ,
                                             "PYTHONPATH": str(plugin)}, timeout=600)
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(tmp_path / "out.csv")
    assert len(written) == 40


def test_the_registry_refuses_a_name_registered_twice(plugin):
    (plugin / "flat_one_coin" / "__init__.py").write_text(
        FAMILY.replace('"flat-one-coin"', '"one-coin"'))
    sys.modules.pop("flat_one_coin", None)
    with pytest.raises(ValueError, match=r"registered twice: \['one-coin'\]"):
        registry.refresh()


def test_a_plug_in_that_fails_to_import_is_left_out_with_a_warning(plugin):
    (plugin / "flat_one_coin" / "__init__.py").write_text("raise ImportError('no numpy here')\n")
    sys.modules.pop("flat_one_coin", None)
    with pytest.warns(UserWarning, match="'flat_one_coin'.*failed to import.*no numpy here"):
        registry.refresh()
    assert "flat-one-coin" not in pl.models.available().index
    assert "one-coin" in pl.models.available().index
