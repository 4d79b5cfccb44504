"""What to annotate next (:mod:`plausible.active`): the expected information of one more
annotation against independent routes (conjugate Dirichlet updates; refitting Dawid-Skene
with the label added), the batch and stopping rules, the replay of a real pool, the command
line, and every bad input."""

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import active
from plausible.active import study
from plausible.cli import main


def entropy_bits(p):
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def top_shares(concentration, rng, n=400_000):
    draws = rng.dirichlet(concentration, size=n)
    return np.bincount(draws.argmax(axis=1), minlength=concentration.size) / n


COUNTS = np.array([[3, 3, 0], [5, 0, 1], [1, 1, 1], [0, 7, 0], [2, 1, 0]])


@pytest.fixture(scope="module")
def dirichlet_result():
    votes = pl.data.Votes(COUNTS, np.array([f"v{i}" for i in range(5)]), np.array(["a", "b", "c"]))
    return pl.aggregate(votes, "dirichlet", draws=4000, chains=4, seed=1)


def test_vote_gain_matches_the_conjugate_update(dirichlet_result):
    """Dirichlet(1 + n): a new vote y has probability (1 + n_y) / sum and leaves
    Dirichlet(1 + n + e_y); the top-class distributions come from fresh Dirichlet draws, not
    from the trace."""
    gains = active.expected_gain(dirichlet_result.trace, dirichlet_result.data, "dirichlet",
                                 draws=16_000)
    rng = np.random.default_rng(0)
    for i, counts in enumerate(COUNTS):
        a = counts + 1.0
        now = top_shares(a, rng)
        after = [top_shares(a + np.eye(3)[y], rng) for y in range(3)]
        p_y = a / a.sum()
        eig = entropy_bits(now) - sum(p_y[y] * entropy_bits(after[y]) for y in range(3))
        expected = sum(p_y[y] * after[y].max() for y in range(3))
        row = gains.iloc[i]
        assert row["information_gain"] == pytest.approx(eig, abs=0.006)
        assert row["expected_certainty"] == pytest.approx(expected, abs=0.012)
    # a unanimous item gains least, the three-way tie most
    assert gains["information_gain"].idxmin() == 3 and gains["information_gain"].idxmax() == 2


def test_merged_outcomes_give_a_lower_bound():
    """With more classes than max_outcomes the rarest outcomes merge into one: never more
    information than the full outcome set, and less when merged classes could be top."""
    counts = np.array([[2, 2, 1, 1, 0], [1, 1, 1, 1, 1], [6, 0, 0, 0, 1]])
    votes = pl.data.Votes(counts, np.arange(3), np.array(list("abcde")))
    result = pl.aggregate(votes, "dirichlet", draws=2000, chains=2, seed=0)
    full = active.expected_gain(result.trace, result.data, "dirichlet")
    merged = active.expected_gain(result.trace, result.data, "dirichlet", max_outcomes=2)
    assert (merged["information_gain"] <= full["information_gain"] + 1e-12).all()
    assert (merged["information_gain"] < full["information_gain"] - 1e-3).any()


def small_labels(seed=3, n_items=14):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items)
    accuracy = np.array([0.9, 0.8, 0.7, 0.65])
    rows = [(f"i{i}", f"a{j}", truth[i] if rng.random() < accuracy[j] else 1 - truth[i])
            for i in range(n_items) for j in range(4) if (i + j) % 4 != 3]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def refitted_gain(model, read):
    """``(gains, best gain, information by refitting)`` for ``model`` on :func:`small_labels`:
    the best (item, annotator) pair's expected gain, and ``H(read(fit)) - sum_y P(y)
    H(read(refit with label y appended))`` over two refits, ``P(y)`` from the draws'
    plausibility and confusion, ``read(result, item)`` the distribution the gain is about."""
    table, run = small_labels(), dict(draws=3000, chains=4)
    result = pl.aggregate(table, model, seed=0, **run)
    gains = active.expected_gain(result.trace, result.data, model, draws=12_000)
    best = gains.loc[gains["information_gain"].idxmax()]
    item, annotator = best["item"], best["annotator"]
    posterior = result.trace["posterior"]
    p = posterior["plausibility"].sel(item=item).values.reshape(-1, 2)
    theta = posterior["confusion"].sel(annotator=annotator).values.reshape(-1, 2, 2)
    p_y = np.einsum("sz,szy->y", p, theta) / p.shape[0]
    after = [read(pl.aggregate(pd.concat([table, pd.DataFrame([(item, annotator, y)],
                                                              columns=table.columns)]),
                               model, seed=1, **run), item) for y in (0, 1)]
    eig = entropy_bits(read(result, item)) - sum(p_y[y] * entropy_bits(after[y])
                                                 for y in (0, 1))
    return gains, best["information_gain"], eig


def test_pair_gain_matches_refitting_with_the_label_added():
    """I(z; y) of the best (item, annotator) pair against two refits of Dawid-Skene, one with
    each possible label appended: H(z) - sum_y P(y) H(z | y), the class posteriors read from
    the refits' plausibilities."""
    gains, gain, eig = refitted_gain(
        "dawid-skene", lambda result, item: result.plausibility.sel(item=item).values)
    assert len(gains) == 14  # every unlabelled pair: one per item here
    assert gain == pytest.approx(eig, abs=0.03)
    assert gain > 0.2  # an uncertain item: far from 0


def top_shares_of(result, item):
    p = result.trace["posterior"]["plausibility"].sel(item=item).values.reshape(-1, 2)
    return np.bincount(p.argmax(axis=1), minlength=2) / p.shape[0]


def test_an_item_distribution_annotator_model_informs_its_top_class():
    """ambiguity-dawid-skene's plausibility is the item's own distribution: the gain of a
    pair is about its top class (as for votes), against two refits with each label appended:
    H(top) - sum_y P(y) H(top | y), the top-class shares read from the refits' draws."""
    _, gain, eig = refitted_gain("ambiguity-dawid-skene", top_shares_of)
    assert gain == pytest.approx(eig, abs=0.04)
    assert gain > 0.05


def test_batches_settle_items_and_pick_one_annotation_per_item(dirichlet_result):
    batch = dirichlet_result.next_items(10, threshold=0.95)
    assert list(batch.columns[:2]) == ["item", "information_gain"]
    assert batch["item"].is_unique and len(batch) == 4  # v3 (7 of 7 votes) is settled
    assert "v3" not in set(batch["item"])
    assert batch["information_gain"].is_monotonic_decreasing
    assert dirichlet_result.next_items(2)["item"].tolist() == batch["item"].head(2).tolist()
    assert dirichlet_result.next_items(10, threshold=0.3).empty  # every item settled: stop
    status = active.settled(dirichlet_result.trace, 0.95)
    assert status.loc["v3", "settled"] and not status.loc["v2", "settled"]
    by_uncertainty = dirichlet_result.next_items(2, strategy="uncertainty")
    assert by_uncertainty["item"].tolist() == ["v2", "v0"]
    assert len(dirichlet_result.next_items(3, strategy="random", seed=0)) == 3


def test_annotator_models_say_who_should_label():
    result = pl.aggregate(small_labels(), "one-coin", draws=300, chains=2, seed=0)
    batch = result.next_items(5)
    assert list(batch.columns[:2]) == ["item", "annotator"] and batch["item"].is_unique
    pairs = pd.DataFrame({"item": ["i0", "i1"], "annotator": ["a3", "a2"]})
    assert set(result.next_items(5, pairs=pairs, threshold=None)["item"]) <= {"i0", "i1"}


@pytest.mark.parametrize("pairs, message", [
    (pd.DataFrame({"item": ["nope"], "annotator": ["a0"]}), "item 'nope' is not in"),
    (pd.DataFrame({"item": ["i0"], "annotator": ["zed"]}), "annotator 'zed' is not in"),
    (pd.DataFrame({"item": ["i0"], "annotator": ["a0"]}), "already labelled item 'i0'"),
    (pd.DataFrame({"task": ["i0"]}), "columns 'item' and 'annotator'"),
])
def test_bad_pairs_are_named(pairs, message):
    result = pl.aggregate(small_labels(), "one-coin", draws=100, chains=2, seed=0)
    with pytest.raises(ValueError, match=message):
        result.next_items(3, pairs=pairs)


def test_bad_requests_are_refused(dirichlet_result):
    with pytest.raises(ValueError, match="budget must be a positive"):
        dirichlet_result.next_items(0)
    with pytest.raises(ValueError, match="strategy must be one of"):
        dirichlet_result.next_items(3, strategy="greedy")
    with pytest.raises(ValueError, match="threshold must lie in"):
        dirichlet_result.next_items(3, threshold=1.5)
    ratings = pd.DataFrame({"item": list("aabb"), "worker": list("xyxy"), "score": [1., 2, 3, 4]})
    rated = pl.aggregate(ratings, threshold=2.5, draws=50, chains=1, seed=0)
    with pytest.raises(ValueError, match="no predictive of a new annotation yet"):
        rated.next_items(1)


def test_replay_reveals_the_pool_it_is_asked_for():
    votes = pl.data.Votes(np.array([[4, 0], [2, 2], [0, 3], [1, 1]]), np.arange(4),
                          np.array(["x", "y"]))
    reference = pd.Series(["x", "x", "y", "x"], index=np.arange(4))
    curve = study.replay(votes, "dirichlet", "information", reference=reference, batch=2,
                         rounds=3, threshold=None, draws=200, seed=0)
    assert curve["annotations"].tolist() == [4, 6, 8, 10]
    pool = study.VotePool.shuffled(votes, np.random.default_rng(0), start=4)
    assert (pool.data().counts == votes.counts).all()  # all four votes of each item at most
    labels = pl.data.Labels.from_frame(small_labels(), item="task", annotator="worker")
    pool = study.LabelPool.shuffled(labels, np.random.default_rng(0))
    assert np.bincount(labels.item[pool.shown]).tolist() == [1] * labels.n_items
    hidden = pool.candidates()["pairs"].head(3)
    pool.reveal(hidden)
    assert pool.spent() == labels.n_items + 3


def test_savings_interpolate_the_mean_curves():
    curves = pd.DataFrame({
        "strategy": ["random"] * 3 + ["information"] * 3, "round": [0, 1, 2] * 2,
        "annotations": [100, 200, 300] * 2, "agreement": [0.5, 0.6, 0.7, 0.5, 0.7, 0.8]})
    table = study.savings(curves, "agreement", 0.7)
    assert table.iloc[:, 0].to_dict() == {"information": 200.0, "random": 300.0}
    assert table.loc["information", "saved_vs_random"] == pytest.approx(0.5)


def test_next_on_the_command_line(tmp_path, capsys):
    small_labels().to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "batch.csv"
    args = ["next", tmp_path / "labels.csv", "--model", "one-coin", "--budget", 4, "--certainty", 0.999,
            "--draws", 200, "--chains", 2, "-o", out]
    assert main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    assert "next 4 annotation(s)" in text and "settled" in text
    batch = pd.read_csv(out)
    assert list(batch.columns[:3]) == ["item", "annotator", "information_gain"]
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame({"task": ["i0"]}).to_csv(pairs, index=False)
    for bad in (["--budget", 0], ["--budget", 3, "--pairs", pairs],
                ["--budget", 3, "--model", "easy-hard"]):
        code = main([str(a) for a in ["next", tmp_path / "labels.csv", *bad, "-o",
                                      tmp_path / "x.csv", "--draws", 50, "--chains", 1]])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x.csv").exists()
