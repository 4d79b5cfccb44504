"""Every figure of :mod:`plausible.plots` draws from the result objects it is documented for."""

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
import xarray as xr

from plausible import plots
from plausible.data import Labels, Votes
from plausible.diagnostics import annotation_predictive_check, vote_predictive_check
from plausible.inference import SBCResult


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    matplotlib.pyplot.close("all")


def test_sbc_ranks_one_panel_per_variable():
    ranks = {"a": np.arange(100).reshape(50, 2) % 11, "b": np.zeros((50, 3), dtype=int)}
    axes = plots.sbc_ranks(SBCResult(ranks=ranks, n_draws=10), bins=5)
    assert len(axes) == 2 and len(axes[0].containers[0]) == 5  # the bars


def test_annotation_checks_one_panel_per_statistic():
    item, annotator = np.divmod(np.arange(30 * 3), 3)
    frame = pd.DataFrame({"item": item, "annotator": annotator,
                          "label": np.random.default_rng(2).integers(0, 2, item.size)})
    labels = Labels.from_frame(frame, classes=[0, 1])
    rep = np.random.default_rng(3).integers(0, 2, (20, labels.n_annotations))
    axes = plots.annotation_checks(annotation_predictive_check(labels, rep))
    assert len(axes) == 4


def test_statistics_check_marks_the_observed_statistics():
    counts = np.array([[3, 0, 1], [1, 1, 2], [0, 4, 0]])
    votes = Votes.from_counts(counts)
    plausibility = np.random.default_rng(0).dirichlet(np.ones(3), size=(1, 40, 3))
    trace = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"plausibility": (("chain", "draw", "item", "class"), plausibility)},
                                coords={"item": votes.items, "class": votes.classes}),
        "observed_data": xr.Dataset({"votes": (("item", "class"), votes.counts)},
                                    coords={"item": votes.items, "class": votes.classes}),
    })
    axes = plots.statistics_check(vote_predictive_check(trace, draws=40, seed=0))
    assert all(len(ax.lines) == 1 for ax in axes)


def test_rank_plot_of_a_trace():
    draws = np.random.default_rng(1).normal(size=(2, 50))
    trace = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw"), draws)})})
    assert plots.rank(trace, ["x"]) is not None


def test_labelers_tradeoff_one_curve_per_expert():
    ax = plots.labelers_tradeoff(eps_grid=np.linspace(0.1, 0.3, 5))
    assert len(ax.lines) == 3


def test_overview_shows_uncertainty_on_a_log_scale_annotators_and_the_items_to_relabel():
    items = pd.DataFrame({"item": [f"i{k}" for k in range(40)], "top_class": ["a", "b"] * 20,
                          "certainty_top1": np.r_[np.ones(25), np.linspace(0.4, 0.999, 15)]})
    annotators = pd.DataFrame({"labels": [3, 50, 400], "share_correct": [0.5, 0.8, 0.3],
                               "q05": [0.1, 0.7, 0.25], "q95": [0.9, 0.9, 0.35]},
                              index=pd.Index(["w1", "w2", "w3"], name="annotator"))
    axes = plots.overview(items, annotators, show=5)
    assert len(axes) == 3 and axes[0].get_xscale() == "log" and axes[1].get_xscale() == "log"
    assert "25 more at certainty 1" in axes[0].get_legend().get_texts()[0].get_text()
    shown = [t.get_text() for t in axes[2].get_yticklabels()]
    assert shown[-1] == "i25 (b)" and len(shown) == 5  # the least certain at the top
    assert len(plots.overview(items)) == 2  # no annotators: no annotator panel


def test_reliability_diagram_one_line_per_method_at_the_bins_points():
    from plausible.diagnostics import reliability

    p = pd.DataFrame({"a": [0.9, 0.6, 0.2, 0.55], "b": [0.1, 0.4, 0.8, 0.45]}, index=list("wxyz"))
    gold = pd.Series(["a", "b", "b", "a"], index=list("wxyz"))
    tables = {"model": reliability(p, gold, n_bins=5), "votes": reliability(p.round(0), gold)}
    ax = plots.reliability_diagram(tables)
    lines = ax.get_lines()[1:]  # after the diagonal
    assert [line.get_label() for line in lines] == ["model", "votes"]
    np.testing.assert_allclose(lines[0].get_xydata(), tables["model"][["confidence", "accuracy"]])
