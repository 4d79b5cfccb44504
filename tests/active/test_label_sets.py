"""What to ask for next on multi-label sets (:mod:`plausible.active.label_sets`): the summed
per-label information against refitting with each possible answer appended, the settled rule,
who should answer, the batch and the command line."""

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import active
from plausible.cli import main
from plausible.data.label_set_simulation import simulate_label_sets
from plausible.data.label_sets import LabelSets


def entropy_bits(p):
    p = np.asarray(p, dtype=float)
    return float(-(p * np.log2(np.where(p > 0, p, 1.0))).sum())


def with_response(sets: LabelSets, item: int, annotator: int, answer) -> LabelSets:
    return LabelSets(np.append(sets.item, item), np.append(sets.annotator, annotator),
                     np.vstack([sets.sets, np.asarray(answer, dtype=bool)[None]]), sets.items,
                     sets.annotators, sets.classes)


def test_gain_matches_refitting_with_each_answer_appended():
    """With one component the labels share nothing, so a set's answer on label k moves only
    label k: two refits, one with the all-absent and one with the all-present set appended,
    give each label's posterior after either answer. The gain is then the sum over labels of
    H(y_k) - sum_x P(x_k) H(y_k | x_k), P(x_k) from the draws of the fit without the answer."""
    sets = simulate_label_sets(n_items=14, n_annotators=3, per_item=2, seed=2,
                               label_rates=[[0.5, 0.5]], weights=[1.0]).data
    options = dict(components=1, draws=2000, chains=4)
    result = pl.aggregate(sets, "multi-label", seed=0, **options)
    gains = active.label_set_gain(result.trace, sets, draws=8_000)
    assert len(gains) == sets.n_items * 3 - sets.n_responses  # every pair without a response
    best = gains.loc[gains["information_gain"].idxmax()]
    i = int(np.flatnonzero(sets.items == best["item"])[0])
    j = int(np.flatnonzero(sets.annotators == best["annotator"])[0])
    posterior = result.trace["posterior"]
    p = posterior["plausibility"].isel(item=i).values.reshape(-1, 2)  # (S, K)
    se = posterior["sensitivity"].isel(annotator=j).values.reshape(-1, 2)
    sp = posterior["specificity"].isel(annotator=j).values.reshape(-1, 2)
    p_present = (p * se + (1 - p) * (1 - sp)).mean(axis=0)  # P(x_k = 1), (K,)
    after = {x: pl.aggregate(with_response(sets, i, j, [x, x]), "multi-label", seed=1,
                             **options).plausibility.isel(item=i).values for x in (0, 1)}
    now = p.mean(axis=0)
    eig = sum(entropy_bits([1 - now[k], now[k]])
              - sum(q * entropy_bits([1 - after[x][k], after[x][k]])
                    for x, q in ((0, 1 - p_present[k]), (1, p_present[k])))
              for k in range(2))
    assert best["information_gain"] == pytest.approx(eig, abs=0.03)
    assert best["information_gain"] > 0.2


@pytest.fixture(scope="module")
def skipping_crowd():
    """Annotator 0 skips most tags (sensitivity 0.3 on every label)."""
    sim = simulate_label_sets(n_items=60, n_annotators=6, per_item=2, skippers=1, seed=3)
    return pl.aggregate(sim.data, "multi-label", draws=500, chains=2, seed=0)


def test_batches_settle_items_and_prefer_careful_annotators(skipping_crowd):
    result = skipping_crowd
    status = active.settled_label_sets(result.trace, 0.95)
    shares = pl.metrics.multi_label.label_certainty(result.trace, how="agreement")
    np.testing.assert_allclose(status["certainty"], shares.min(axis=1))
    assert status["settled"].equals(pd.Series((shares >= 0.95).all(axis=1), index=status.index,
                                              name="settled"))
    batch = result.next_items(10)
    assert list(batch.columns[:3]) == ["item", "annotator", "information_gain"]
    assert batch["item"].is_unique and len(batch) == 10
    assert batch["information_gain"].is_monotonic_decreasing
    assert not status.loc[batch["item"], "settled"].any()
    gains = active.label_set_gain(result.trace, result.data)
    by_annotator = gains.groupby("annotator")["information_gain"].mean()
    assert by_annotator.idxmin() == result.data.annotators[0]  # the skipper tells least
    assert result.next_items(5, threshold=0.5).empty  # every label is on one side: stop
    uncertain = result.next_items(3, strategy="uncertainty")
    assert uncertain["certainty"].is_monotonic_increasing
    pairs = pd.DataFrame({"item": result.data.items[:2], "annotator": result.data.annotators[5]})
    pairs = pairs[~pairs.apply(tuple, axis=1).isin(
        set(zip(result.data.items[result.data.item], result.data.annotators[result.data.annotator])))]
    chosen = result.next_items(5, pairs=pairs, threshold=None)
    assert set(chosen["item"]) <= set(pairs["item"])


def test_next_label_sets_on_the_command_line(tmp_path, capsys):
    sim = simulate_label_sets(n_items=30, n_annotators=4, per_item=2, seed=4)
    sim.data.to_wide().to_csv(tmp_path / "sets.csv", index=False)
    out = tmp_path / "batch.csv"
    args = ["next", tmp_path / "sets.csv", "--budget", 3, "--draws", 200, "--chains", 2,
            "-o", out]
    assert main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    assert "next 3 annotation(s)" in text and "every label" in text
    assert list(pd.read_csv(out).columns[:3]) == ["item", "annotator", "information_gain"]
