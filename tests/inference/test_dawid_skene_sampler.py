"""The compiled Dawid–Skene sampler: its class sweep against enumeration and brute-force
counts, its lazily computed plausibilities against the stored ones, seeds and threads,
simulation-based calibration, and the memory guard's choice between stored and computed
plausibilities. (Its posterior against NUTS with the classes summed out is
``tests/models/test_dawid_skene.py::test_gibbs_matches_nuts_with_classes_summed_out``: ``ds.build``
samples through it by default.)"""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax
from dawid_skene_simulation import simulate_from_prior
from split_rhat import classic_split_rhat

import plausible as pl
from plausible.models.dawid_skene import kernel
from plausible.models.dawid_skene import members
from plausible.models.classifier_prior import ClassifierPrior
from plausible.models.dawid_skene.sampler import Design, sample_dawid_skene
from plausible.inference.memory import MemoryBudgetError
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import dawid_skene as ds


def labels_of(n_items=60, n_annotators=5, n_classes=5, seed=0):
    return pl.data.simulate_glad(n_items, n_annotators, n_classes=n_classes, coverage=0.7,
                                 seed=seed).labels


def enumerated_posterior(labels, pi, theta, gamma):
    """``softmax(log pi + gamma sum_k log theta[j_k, :, x_k])`` per item, by a plain loop."""
    out = np.empty((labels.n_items, labels.n_classes))
    for i in range(labels.n_items):
        log_p = np.log(pi).copy()
        for k in np.flatnonzero(labels.item == i):
            log_p += gamma * np.log(theta[labels.annotator[k], :, labels.label[k]])
        out[i] = softmax(log_p)
    return out


@pytest.mark.parametrize("n_classes", [2, 3, 5, 7])
def test_class_sweep_matches_enumeration_and_keeps_the_counts(n_classes):
    labels = labels_of(n_classes=n_classes, seed=n_classes)
    design = Design(labels)
    rng = np.random.default_rng(1)
    gamma = 0.7
    pi = rng.dirichlet(np.ones(n_classes))
    theta = rng.dirichlet(np.ones(n_classes), size=(labels.n_annotators, n_classes))
    z = rng.integers(n_classes, size=labels.n_items)
    counts = np.zeros((labels.n_annotators * n_classes, n_classes), dtype=np.int64)
    class_counts = np.zeros(n_classes, dtype=np.int64)
    kernel.count_labels(design.offsets, design.code, z, counts, class_counts, 0, labels.n_items)
    out = np.empty((labels.n_items, n_classes), dtype=np.float32)
    u = rng.random(labels.n_items)
    before = z.copy()
    changed = kernel.class_sweep(design.offsets, design.code, design.table(np.log(theta)),
                                 np.log(pi), gamma, u, z, design.fixed, counts, class_counts,
                                 out, 0, labels.n_items)
    expected = enumerated_posterior(labels, pi, theta, gamma)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-30)
    np.testing.assert_array_equal(z, (u[:, None] > np.cumsum(expected, axis=1)).sum(axis=1)
                                  .clip(max=n_classes - 1))  # inverse CDF of the posterior
    assert changed == (z != before).sum()
    brute = np.zeros_like(counts)
    for k in range(labels.n_annotations):
        brute[labels.annotator[k] * n_classes + labels.label[k], z[labels.item[k]]] += 1
    np.testing.assert_array_equal(counts, brute)
    np.testing.assert_array_equal(class_counts, np.bincount(z, minlength=n_classes))


def test_class_draws_follow_the_posterior():
    """Many sweeps at fixed parameters: each item's class frequencies match its posterior
    (chi-square, pooled over items)."""
    labels = labels_of(n_items=8, n_classes=3, seed=4)
    design = Design(labels)
    rng = np.random.default_rng(5)
    pi = rng.dirichlet(np.ones(3))
    theta = rng.dirichlet(np.full(3, 2.0), size=(labels.n_annotators, 3))
    table, log_pi = design.table(np.log(theta)), np.log(pi)
    z = np.zeros(labels.n_items, dtype=np.int64)
    counts = np.zeros((labels.n_annotators * 3, 3), dtype=np.int64)
    class_counts = np.zeros(3, dtype=np.int64)
    kernel.count_labels(design.offsets, design.code, z, counts, class_counts, 0, labels.n_items)
    n = 20_000
    seen = np.zeros((labels.n_items, 3))
    no_store = np.empty((0, 3), dtype=np.float32)
    for _ in range(n):
        kernel.class_sweep(design.offsets, design.code, table, log_pi, 1.0,
                           rng.random(labels.n_items), z, design.fixed, counts, class_counts,
                           no_store, 0, labels.n_items)
        seen[np.arange(labels.n_items), z] += 1
    expected = n * enumerated_posterior(labels, pi, theta, 1.0)
    keep = expected > 5
    chi2 = ((seen - expected)[keep] ** 2 / expected[keep]).sum()
    assert stats.chi2.sf(chi2, keep.sum() - labels.n_items) > 1e-3


def member_of(name, labels):
    """The annotator half-sweep of each member, at its builder's default priors."""
    C = labels.n_classes
    beta = ds.confusion_concentration(C, (4.0, 1.0))
    return {"dawid-skene": members.FullConfusion(beta),
            "one-coin": members.OneCoin((4.0, 1.0)),
            "mace": members.Mace((2.0, 1.0), np.ones(C), 1),
            "hierarchical": members.Hierarchical(beta, (2.0, 0.1), np.full((C, C), 1 / C))}[name]


def run(labels, member="dawid-skene", **options):
    return sample_dawid_skene(labels, member=member_of(member, labels),
                              class_concentration=np.ones(labels.n_classes), **options)


@pytest.mark.parametrize("member", ["dawid-skene", "one-coin", "mace", "hierarchical",
                                    "classifier"])
def test_lazy_plausibilities_equal_the_stored_ones_and_threads_do_not_change_draws(member):
    """``classifier``: full Dawid–Skene with a classifier's prior of each item's class."""
    labels = labels_of(n_items=700, seed=6)
    options, prior = {}, ["class_prior"]
    if member == "classifier":
        p = np.random.default_rng(6).dirichlet(np.ones(labels.n_classes), size=labels.n_items)
        options = {"classifier": ClassifierPrior(np.log(p))}
        member, prior = "dawid-skene", ["temperature", "class_bias"]
    stored = run(labels, member, draws=30, tune=5, chains=2, seed=3, cores=1, **options)
    lazy = run(labels, member, draws=30, tune=5, chains=2, seed=3, cores=2, lazy=True, **options)
    split = run(labels, member, draws=30, tune=5, chains=1, seed=3, cores=2,  # items in threads
                **options)
    names = [*prior, *member_of(member, labels).stored(1, 2)]
    for name in names:
        np.testing.assert_array_equal(stored.posterior[name], lazy.posterior[name])
        np.testing.assert_array_equal(stored.posterior[name][:1], split.posterior[name])
    assert lazy.posterior["plausibility"].chunks is not None  # computed when read
    np.testing.assert_allclose(lazy.posterior["plausibility"].values,
                               stored.posterior["plausibility"].values, rtol=1e-6, atol=1e-30)
    np.testing.assert_array_equal(stored.posterior["plausibility"][:1],
                                  split.posterior["plausibility"])
    np.testing.assert_array_equal(stored.sample_stats["classes_changed"][:1],
                                  split.sample_stats["classes_changed"])


@pytest.mark.slow  # 2 x 150 fits; the sweep's enumeration checks above stay in the quick suite
@pytest.mark.parametrize("sampler", ["joint", "collapsed"])
def test_simulation_based_calibration_of_the_compiled_sampler(sampler):
    result = simulation_based_calibration(lambda labels: ds.build(labels, sampler=sampler),
                                          simulate_from_prior,
                                          var_names=["class_prior", "confusion"],
                                          n_simulations=150, draws=400, chains=2, thin=8,
                                          seed=11, log_likelihood=False)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)


def test_the_split_rhat_of_a_summary_is_that_of_its_draws_and_sees_a_chain_apart():
    rng = np.random.default_rng(3)
    x = rng.beta(2, 5, size=(3, 301, 4, 2))
    x[2, :, 0] += 0.2  # chain 2 elsewhere for item 0
    summary = pl.metrics.Accumulator(3, 4, 2)
    for c in range(3):
        for d in range(301):
            if d == 150:
                summary.split(c)
            summary.add(c, x[c, d])
    rhat = pl.metrics.split_rhat(summary.dataset())
    np.testing.assert_allclose(rhat.values, classic_split_rhat(x), rtol=1e-10)
    assert float(rhat[0].min()) > 1.15 and float(rhat[1:].max()) < 1.05
    unsplit = pl.metrics.Accumulator(3, 4, 2)  # chains never halved: no split R-hat
    for c in range(3):
        unsplit.add(c, x[c, 0])
    assert pl.metrics.split_rhat(unsplit.dataset()) is None


def test_plausibilities_are_kept_as_asked_or_summarised_within_the_memory_budget():
    labels = labels_of(n_items=200, seed=8)
    model = ds.build(labels)
    per_draw = 8 * (5 + labels.n_annotators * 25 + 1)
    samples = 2 * 100
    stored = pl.sample(model, draws=100, chains=2, seed=0, check_convergence=False,
                       keep="draws")
    assert stored.posterior.attrs["computed_when_read"] == ""
    assert "plausibility_summary" not in stored.children
    # the draws fit once but not twice: "auto" summarises them, without a warning
    budget = samples * (per_draw + 4 * labels.n_items * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summarised = pl.sample(model, draws=100, chains=2, seed=0, memory_budget=budget,
                               check_convergence=False)
    assert summarised.posterior.attrs["computed_when_read"] == "plausibility"
    for name in ("class_prior", "confusion"):  # the same chain
        np.testing.assert_array_equal(summarised.posterior[name], stored.posterior[name])
    # what the per-item table reads comes from the summaries, equal to the draws' own
    np.testing.assert_allclose(pl.metrics.posterior_mean(summarised).values,
                               pl.metrics.posterior_mean(stored).values, rtol=1e-6)
    np.testing.assert_allclose(pl.metrics.label_certainty(summarised).values,
                               pl.metrics.label_certainty(stored).values, atol=1e-12)
    np.testing.assert_allclose(pl.metrics.annotation_certainty(summarised).values,
                               pl.metrics.annotation_certainty(stored).values, atol=1e-12)
    # every other read recomputes the draws from the parameters, the log-likelihood too
    np.testing.assert_allclose(pl.metrics.annotation_certainty(summarised, top=2).values,
                               pl.metrics.annotation_certainty(stored, top=2).values)
    lazy_ll = summarised.log_likelihood["labels"]
    assert lazy_ll.chunks is not None
    np.testing.assert_array_equal(lazy_ll.values, stored.log_likelihood["labels"].values)
    # the split R-hat from each half-chain's moments is the draws' own (classic, unranked)
    draws = stored.posterior["plausibility"].transpose("chain", "draw", ...).values
    rhat = pl.metrics.split_rhat(pl.metrics.accumulated(summarised))
    moving = np.isfinite(rhat.values)  # not within 1e-6 of 0 or 1 in every draw
    assert moving.mean() > 0.5
    np.testing.assert_allclose(rhat.values[moving],
                               classic_split_rhat(draws.astype(np.float64))[moving], rtol=1e-9)
    report = pl.diagnostics.convergence_report(summarised)  # recomputes the draws
    row = report.table.loc["plausibility"]
    kept = pl.diagnostics.convergence_report(stored).table.loc["plausibility"]
    assert row["max_rhat"] == pytest.approx(kept["max_rhat"], rel=1e-4)
    assert row["status"] == kept["status"] and "recomputed from the stored" in row["reason"]
    unreadable = summarised.copy()  # the draws cannot be recomputed: the summaries' R-hat
    del unreadable["posterior"]["plausibility"]
    row = pl.diagnostics.convergence_report(unreadable).table.loc["plausibility"]
    assert row["max_rhat"] == pytest.approx(float(rhat.max()))
    assert row["status"] == ("not converged" if row["max_rhat"] > 1.01 else "not assessed")
    assert "from the moments accumulated while sampling" in row["reason"]
    assert pl.diagnostics.convergence_report(summarised, var_names=["plausibility"]).table.loc[
        "plausibility", "status"] in ("converged", "not converged")
    # a summary only describes the draws it was made from
    assert pl.metrics.accumulated(summarised.isel(draw=slice(0, 50), missing_dims="ignore")) \
        is None
    with pytest.raises(MemoryBudgetError, match="keep='summary'"):
        pl.sample(model, draws=100, chains=2, memory_budget=budget // 2, keep="draws")
    with pytest.raises(MemoryBudgetError, match="2 chains x 100 draws of this model would take"):
        pl.sample(model, draws=100, chains=2, memory_budget=per_draw)
    with pytest.raises(ValueError, match="keep must be one of"):
        pl.sample(model, draws=10, keep="some")


def test_keep_summary_needs_plausibilities_computable_from_the_parameters():
    labels = labels_of(n_items=20, seed=8)
    with pytest.raises(ValueError, match="keep='summary' needs a model whose sampler"):
        pl.sample(pl.models.entry("glad").build(labels), draws=10, keep="summary")


def test_lazy_blocks_hold_no_more_confusion_tables_than_the_budget():
    """A lazily computed block recomputes its draws' confusion tables ``(draw, annotator * C,
    C)``: with many classes they, not the plausibilities, set how many draws a block takes."""
    labels = labels_of(n_items=30, n_annotators=6, n_classes=9, seed=9)
    per_draw = labels.n_annotators * 9 * 9  # 486 table values per draw, 270 plausibilities
    stored = run(labels, "one-coin", draws=12, tune=2, chains=1, seed=1)
    with pl.metrics.set_options(chunk_elements=3 * per_draw):
        lazy = run(labels, "one-coin", draws=12, tune=2, chains=1, seed=1, lazy=True)
    assert max(lazy.posterior["plausibility"].chunks[1]) == 3
    np.testing.assert_allclose(lazy.posterior["plausibility"].values,
                               stored.posterior["plausibility"].values, rtol=1e-6, atol=1e-30)


def test_designs_concatenated_file_by_file_equal_the_design_of_all_the_labels():
    labels = labels_of(n_items=90, seed=4)
    parts = [labels.subset(slice(a, b)) for a, b in ((0, 20), (20, 61), (61, 90))]
    whole, joined = Design(labels), Design.concatenate(Design(p) for p in parts)
    for name in ("offsets", "code", "repeats", "annotator_labels"):
        np.testing.assert_array_equal(getattr(joined, name), getattr(whole, name), err_msg=name)
    assert (joined.n_items, joined.most_labels) == (whole.n_items, whole.most_labels)
