"""The model registry: every aggregation model is listed with its format and reliability
semantics, and every builder takes ``reliability=`` with the same meaning and errors."""

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import models
from plausible.data import Comparisons, Labels, LabelSets, Rankings, Ratings, Votes

DATA = {
    "votes": Votes.from_counts([[2, 1, 0], [0, 3, 1], [1, 1, 1]]),
    "rankings": Rankings.from_selectors([[[[0, 2], [1]], [[1]]], [[[3]], [[3], [0]]]], classes=5),
    "labels": Labels.from_frame(pd.DataFrame({
        "item": [0, 0, 0, 1, 1, 2, 2, 2, 3], "annotator": [0, 1, 2, 0, 2, 0, 1, 2, 1],
        "label": [1, 1, 0, 0, 0, 1, 1, 1, 0]})),
    "ratings": Ratings.from_frame(pd.DataFrame({
        "item": [0, 0, 1, 1, 2, 2, 2], "annotator": [0, 1, 0, 1, 0, 1, 2],
        "score": [1.0, 1.5, 3.0, 2.5, 0.5, 1.0, 0.0]})),
    "label_sets": LabelSets.from_frame(pd.DataFrame({
        "item": [0, 0, 0, 1, 1, 2], "annotator": [0, 0, 1, 0, 1, 0],
        "label": ["a", "b", "a", "c", None, "b"]})),
    "comparisons": Comparisons.from_frame(pd.DataFrame({
        "worker": [0, 0, 1, 1, 2], "left": ["x", "y", "x", "z", "y"],
        "right": ["y", "z", "z", "x", "x"], "label": ["x", "y", "x", "x", "y"]})),
}
FRAMES = {  # DATA as the tables users hold, in crowd-kit's column names
    "votes": pd.DataFrame({"task": ["a", "b", "c"], 0: [2, 0, 1], 1: [1, 3, 1], 2: [0, 1, 1]}),
    "rankings": pd.DataFrame({"task": [0, 0, 0, 0, 1, 1, 1], "worker": [0, 0, 0, 1, 0, 1, 1],
                              "label": [0, 2, 1, 1, 3, 3, 0], "rank": [1, 1, 2, 1, 1, 1, 2]}),
    "labels": DATA["labels"].to_frame().rename(columns={"item": "task", "annotator": "worker"}),
    "ratings": pd.DataFrame({"task": [0, 0, 1, 1, 2, 2, 2], "worker": [0, 1, 0, 1, 0, 1, 2],
                             "score": [1.0, 1.5, 3.0, 2.5, 0.5, 1.0, 0.0]}),
    "label_sets": DATA["label_sets"].to_wide().rename(columns={"item": "task",
                                                              "annotator": "worker"}),
    "comparisons": DATA["comparisons"].to_frame(),
}
OPTIONS = {"normal-inverse-gamma": {"threshold": 1.5},
           "censored-normal-inverse-gamma": {"threshold": 1.5, "scale": (0.0, 3.0)}}


def test_available_lists_every_aggregation_model():
    table = models.available()
    assert set(table.index) == {"dirichlet", "hierarchical-dirichlet", "prirn", "plackett-luce", "annotator-beta",
                                "dawid-skene", "hierarchical-dawid-skene",
                                "learned-prior-dawid-skene", "one-coin",
                                "mace", "easy-hard", "ordered-probit", "glad", "su-difficulty",
                                "normal-inverse-gamma", "censored-normal-inverse-gamma",
                                "multi-label", "bradley-terry", "noisy-bradley-terry",
                                "ambiguity-dawid-skene", "ambiguity-one-coin",
                                "votes-dawid-skene"}
    assert set(table["data"]) == set(models.FORMATS)
    assert set(table["reliability"]) == {"tempering", "repetitions"}
    assert list(models.available("rankings").index) == ["plackett-luce", "prirn"]
    with pytest.raises(ValueError, match="unknown model 'bcc'; available: dirichlet"):
        models.get("bcc")
    with pytest.raises(ValueError, match="data must be one of"):
        models.available("images")


@pytest.mark.filterwarnings("ignore:empirical Bayes")  # four items: the fit hits its bound
@pytest.mark.parametrize("name", list(models.available().index))
def test_every_builder_takes_reliability(name):
    entry = models.entry(name)
    data = DATA[entry.data]
    for reliability in (1, 3):
        model = entry.build(data, reliability=reliability, **OPTIONS.get(name, {}))
        assert model["plausibility"].ndim == 2
        assert model.named_vars_to_dims["plausibility"] == ("item", "class")
    for bad in (0, -1.0, np.nan, np.inf, "high", True):
        with pytest.raises(ValueError, match="reliability"):
            entry.build(data, reliability=bad, **OPTIONS.get(name, {}))
    fractional = lambda: entry.build(data, reliability=2.5, **OPTIONS.get(name, {}))  # noqa: E731
    if entry.reliability == "repetitions":
        with pytest.raises(ValueError, match=r"reliability must be a whole number >= 1 \(.*"
                                             "repeats every"):
            fractional()
    else:
        fractional()


@pytest.mark.filterwarnings("ignore:empirical Bayes")
@pytest.mark.parametrize("name", list(models.available().index))
def test_every_builder_takes_a_table_in_crowd_kit_names(name):
    """Each builder reads a DataFrame as the front door does (``task``, ``worker`` ...)."""
    entry = models.entry(name)
    from_table = entry.build(FRAMES[entry.data], **OPTIONS.get(name, {}))
    from_container = entry.build(DATA[entry.data], **OPTIONS.get(name, {}))
    assert from_table.named_vars.keys() == from_container.named_vars.keys()
    assert from_table.named_vars_to_dims == from_container.named_vars_to_dims
    assert len(from_table.coords["item"]) == len(from_container.coords["item"])


def test_every_entry_says_what_its_plausibility_means():
    table = models.available()
    assert set(table["plausibility"]) == set(models.MEANINGS)
    for name, row in table.iterrows():
        expected = {"labels": models.TRUE_CLASS_POSTERIOR, "label_sets": models.LABEL_MARGINALS,
                    "comparisons": models.RANK_DISTRIBUTION}.get(row["data"],
                                                                 models.ITEM_DISTRIBUTION)
        if name.startswith("ambiguity-"):  # labels read as each item's own distribution
            expected = models.ITEM_DISTRIBUTION
        if name == "votes-dawid-skene":  # votes read as evidence of one true class
            expected = models.TRUE_CLASS_POSTERIOR
        assert row["plausibility"] == expected, name
    with pytest.raises(ValueError, match="plausibility must be one of"):
        models.ModelEntry("x", models.get("dirichlet"), "votes", "tempering", True, "",
                          plausibility="vibes")


@pytest.mark.filterwarnings("ignore")  # a few draws on a few items: convergence is not the point
@pytest.mark.parametrize("name", list(models.available().index))
def test_every_registered_model_fits_through_the_front_door(name):
    """A smoke fit of each registered model: ``pl.aggregate`` on the tiny data above with a
    few draws returns a finite plausibility per (item, class). The statistical checks of each
    model live in its own test file; this one keeps a model that cannot fit at all out of the
    quick suite's blind spot (``make test`` leaves the slow checks to ``make test-all``)."""
    entry = models.entry(name)
    data = DATA[entry.data]
    result = pl.aggregate(data, name, draws=30, chains=2, seed=0, **OPTIONS.get(name, {}))
    assert result.model == name
    plausibility = result.plausibility
    assert plausibility.dims == ("item", "class") and plausibility.size > 0
    assert np.isfinite(plausibility.values).all()
    if entry.plausibility != models.LABEL_MARGINALS:  # one distribution per item
        np.testing.assert_allclose(plausibility.sum("class"), 1.0, rtol=1e-6)


UPPER_LAYERS = ("plausible/aggregation", "plausible/report", "plausible/cli",
                "plausible/comparison.py", "plausible/active")
"""The layers above the models, which read what the registry declares and name no model."""
COLUMN_WORDS = {"accuracy", "strategy"}
"""Posterior variable names that are also the column names of study tables
(``plausible.active.study``): a word there is not a model's variable."""


def test_no_layer_above_the_models_names_a_model_or_its_variables():
    """No string literal in the upper layers is a registered model's name or one of the
    posterior variables of a registered model (built on the tiny data above), and none imports
    a model family's module: they read the registry's declarations."""
    import re
    from pathlib import Path

    variables = set()
    for name in models.available().index:
        entry = models.entry(name)
        built = entry.build(DATA[entry.data], **OPTIONS.get(name, {}))
        variables |= {v.name for v in built.free_RVs + built.deterministics}
    variables -= {"plausibility"} | COLUMN_WORDS
    names = set(models.available().index) | variables
    families = {p.name for p in models.registry.FAMILIES.iterdir()
                if (p / "__init__.py").exists()}
    literal = re.compile(r"""["']([a-z0-9_-]+)["']""")
    family_import = re.compile(r"(?:plausible\.models\.|from plausible\.models import .*\b)("
                               + "|".join(sorted(families)) + r")\b")
    root = Path(models.__file__).parents[2]
    found = []
    for layer in UPPER_LAYERS:
        path = root / layer
        for file in ([path] if path.suffix else sorted(path.rglob("*.py"))):
            for number, line in enumerate(file.read_text().splitlines(), 1):
                hits = {m for m in literal.findall(line) if m in names}
                hits |= set(family_import.findall(line))
                found += [f"{file.relative_to(root)}:{number}: {hit}" for hit in sorted(hits)]
    assert not found, "\n".join(found)
