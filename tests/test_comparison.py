"""``pl.compare``: LOO prefers the model that generated the data and the checks name the misfit
of the one that did not; every registered model family goes through it; bad requests are
refused by name."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import models

matplotlib.use("Agg")


def asymmetric_crowd(seed=0, n_items=200, n_annotators=5):
    """Binary labels from annotators who are far more sensitive (0.95) than specific (0.55):
    Dawid–Skene's confusion matrices express them, one-coin's single accuracy cannot."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.3
    rows = []
    for i in range(n_items):
        for j in range(n_annotators):
            says = rng.random() < (0.95 if truth[i] else 0.45)
            rows.append((f"item{i}", f"ann{j}", int(says)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def test_loo_prefers_the_generating_model_and_checks_name_the_other_ones_misfit():
    result = pl.compare(asymmetric_crowd(), ["one-coin", "dawid-skene"], draws=1500)
    table = result.table
    assert list(table.index) == ["dawid-skene", "one-coin"]  # LOO order
    behind = table.loc["one-coin"]
    assert behind["elpd_diff"] < -2 * behind["dse"], table
    assert (table["status"] == "converged").all(), table
    missed = result.checks["missed"].groupby(level="model").sum()
    assert missed["one-coin"] > missed["dawid-skene"], result.checks
    p = result.checks.loc["one-coin", "extreme_p_value"]
    assert ((p < 0.025) | (p > 0.975)).any()
    assert table.loc["dawid-skene", "mean_certainty_top1"] <= 1
    assert result.plot() is not None
    assert "dawid-skene" in repr(result)


FAMILIES = {
    "votes": pd.DataFrame({"task": ["a", "b", "c", "d"], "x": [3, 0, 1, 2], "y": [0, 3, 2, 1]}),
    "labels": asymmetric_crowd(seed=1, n_items=30, n_annotators=3),
    "rankings": pd.DataFrame({"item": ["a", "a", "a", "b", "b", "c", "c"],
                              "annotator": list("uuvuuvu"), "label": list("xyyzxzy"),
                              "rank": [1, 2, 1, 1, 1, 1, 2]}),
    "ratings": pd.DataFrame({"item": list("aabbcc"), "annotator": list("uvuvuv"),
                             "score": [3.0, 4.0, 1.0, 0.5, 2.5, 2.0]}),
}
OPTIONS = {"normal-inverse-gamma": {"threshold": 2.0},
           "censored-normal-inverse-gamma": {"threshold": 2.0, "scale": (0.0, 5.0)}}


@pytest.mark.filterwarnings("ignore:empirical Bayes")  # three items: the fit hits its bound
@pytest.mark.parametrize("kind", list(FAMILIES))
def test_every_registered_model_family_compares(kind):
    names = list(models.available(kind).index)
    candidates = {name: (name, OPTIONS.get(name, {})) for name in names}
    result = pl.compare(FAMILIES[kind], candidates, draws=100, chains=2, check_draws=20)
    assert list(result.fits) == names
    assert set(result.table.index) == set(names)
    compared = result.loo.index
    for name in names:  # each model is compared, or the notes say why not
        assert name in compared or any(note.startswith(f"{name}:") for note in result.notes)
    assert set(result.convergence.index) == set(names)


def test_bad_requests_are_refused_by_name():
    crowd = asymmetric_crowd(n_items=10)
    with pytest.raises(ValueError, match="non-empty list"):
        pl.compare(crowd, [])
    with pytest.raises(ValueError, match="non-empty list"):
        pl.compare(crowd, "dawid-skene")
    with pytest.raises(ValueError, match="'mace' is listed twice"):
        pl.compare(crowd, ["mace", "mace"])
    with pytest.raises(ValueError, match="unknown model 'bcc'"):
        pl.compare(crowd, ["bcc"])
    with pytest.raises(ValueError, match="model 'prirn' takes rankings; the data are labels"):
        pl.compare(crowd, ["dawid-skene", "prirn"])


def test_each_model_is_fitted_and_checked_on_a_named_progress_bar(monkeypatch, capsys):
    """On a terminal a bar per model, named with its place in the list, counts its sweeps;
    off a terminal (captured stderr) nothing is printed."""
    import io
    import re

    from rich.console import Console

    from plausible import comparison

    out, real = io.StringIO(), comparison.reporting
    monkeypatch.setattr(comparison, "reporting", lambda enabled, description: real(
        enabled, description, console=Console(file=out, force_terminal=True, width=100)))
    crowd = asymmetric_crowd(n_items=40)
    pl.compare(crowd, ["one-coin", "dawid-skene"], draws=50, chains=2)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "one-coin (1/2)" in text and "dawid-skene (2/2)" in text and "sweeps" in text
    monkeypatch.setattr(comparison, "reporting", real)
    pl.compare(crowd, ["one-coin"], draws=50, chains=2)
    assert capsys.readouterr().err == ""
