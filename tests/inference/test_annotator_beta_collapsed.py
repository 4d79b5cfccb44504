"""The collapsed sweep of Carpenter's annotator-beta model
(:mod:`plausible.models.annotator_beta.collapsed`): the class sweep's stationary
distribution against the enumerated ``p(c | hyper, x)``, the hyper-parameters' marginal
density against quadrature, and simulation-based calibration of the whole sampler. NUTS on
the model with the classes summed out: ``tests/models/test_annotator_beta.py``."""

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import betaln

import plausible as pl
from plausible.models.annotator_beta import collapsed
from plausible.inference.declarations import declared_gibbs
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import annotator_beta as ab

# 5 items, 3 annotators; annotator 0 labels item 1 twice (two labels on one entry)
ITEM = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 4])
ANNOTATOR = np.array([0, 1, 2, 0, 0, 1, 2, 1, 2, 0, 1, 2, 2])
LABEL = np.array([1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1])
# (alpha, beta) per block; blocks specificity (class 0) and sensitivity (class 1), or one
# symmetric accuracy covering both
PRIORS = {"per annotator": np.array([[3.0, 1.0], [2.0, 1.5]]),
          "symmetric": np.array([[2.5, 1.0]]),
          "pooled": np.array([[1.0, 1.0], [2.0, 1.0]])}
A_Q, B_Q = 1.5, 2.0


def _layout(kind):
    """``(index (B, J), block_of (2,))`` of an accuracy kind."""
    J = 3
    if kind == "per annotator":
        return np.tile(np.arange(J), (2, 1)), np.array([0, 1])
    if kind == "symmetric":
        return np.arange(J)[None, :], np.array([0, 0])
    return np.zeros((2, J), dtype=np.int64), np.array([0, 1])


def _log_joint(c, kind, gamma):
    """``log p(c, x | hyper)`` with ``q`` and the accuracies integrated out, from each entry's
    agreeing and disagreeing labels counted here by brute force (``gamma`` copies each)."""
    priors = PRIORS[kind]
    index, block_of = _layout(kind)
    n1 = c.sum()
    out = betaln(A_Q + n1, B_Q + c.size - n1) - betaln(A_Q, B_Q)
    for b in range(priors.shape[0]):
        for e in np.unique(index[b]):
            mine = (block_of[c[ITEM]] == b) & (index[b, ANNOTATOR] == e)
            agree = gamma * np.sum(mine & (LABEL == c[ITEM]))
            disagree = gamma * np.sum(mine & (LABEL != c[ITEM]))
            out += betaln(priors[b, 0] + agree, priors[b, 1] + disagree) - betaln(*priors[b])
    return out


@pytest.mark.parametrize("kind", list(PRIORS))
@pytest.mark.parametrize("gamma, fixed_item", [(1, None), (2, None), (1, 3)])
def test_class_sweep_leaves_the_enumerated_posterior_invariant(kind, gamma, fixed_item):
    """The share of sweeps in each class vector against ``p(c | x)`` by enumeration (every
    item, or every item but a known one), the items whose labels share an entry taken by the
    sequential terms and the others by the one-log ratio; one sweep updates every item, so
    60,000 sweeps of 5 items leave a Monte Carlo error of about 0.003 on each share."""
    n_items = 5
    fixed = np.full(n_items, -1)
    if fixed_item is not None:
        fixed[fixed_item] = 1
    configs = np.array([c for c in itertools.product((0, 1), repeat=n_items)
                        if fixed_item is None or c[fixed_item] == 1])
    log_p = np.array([_log_joint(c, kind, gamma) for c in configs])
    expected = np.exp(log_p - log_p.max())
    expected /= expected.sum()

    index, block_of = _layout(kind)
    order = np.argsort(ITEM, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(ITEM))])
    annotator, label = ANNOTATOR[order], LABEL[order]
    shared = collapsed.shared_entries(offsets, annotator, index, block_of)
    # item 1's two labels by annotator 0 share an entry; the pooled accuracy one for all labels
    np.testing.assert_array_equal(shared, [True] * 4 + [False] if kind == "pooled" else
                                  [False, True, False, False, False])
    rng = np.random.default_rng(7)
    c = np.where(fixed >= 0, fixed, rng.integers(0, 2, n_items))
    counts, class_counts = collapsed.count_classes(c, offsets, annotator, label, index, block_of,
                                                   gamma, 3)
    code = {tuple(config): n for n, config in enumerate(configs)}
    visits = np.zeros(len(configs))
    for _ in range(60_000):
        collapsed.class_sweep(rng, c, fixed, shared, offsets, annotator, label, index, block_of, counts,
                              class_counts, PRIORS[kind], A_Q, B_Q, gamma)
        visits[code[tuple(c)]] += 1
    # the counts kept in place are those of the final classes
    again, again_classes = collapsed.count_classes(c, offsets, annotator, label, index, block_of,
                                                   gamma, 3)
    np.testing.assert_array_equal(counts, again)
    np.testing.assert_array_equal(class_counts, again_classes)
    np.testing.assert_allclose(visits / visits.sum(), expected, atol=0.015)


def test_hyper_marginal_density_integrates_the_accuracies_out():
    """``log prod_e int Beta(theta | m s, (1 - m) s) theta^A_e (1 - theta)^D_e dtheta`` by
    quadrature, against the density from the distinct count pairs (entries without labels and
    repeated pairs included)."""
    counts = np.zeros((2, 6, 2))
    counts[1, :, 0] = [3, 0, 3, 1, 7, 0]
    counts[1, :, 1] = [1, 0, 1, 0, 2, 4]
    agree, disagree, multiplicity = collapsed.count_pairs(counts, 1, 6)
    assert multiplicity.sum() == 5  # the entry without labels is left out
    for mean, inv_sqrt in [(0.8, 0.5), (0.55, 0.9), (0.95, 0.2)]:
        s = inv_sqrt**-2
        a, b = mean * s, (1 - mean) * s
        expected = sum(np.log(integrate.quad(
            lambda t: stats.beta.pdf(t, a, b) * t**A * (1 - t)**D, 0, 1, epsabs=1e-14)[0])
            for A, D in counts[1])
        value = collapsed.group_marginal_log_density(mean, inv_sqrt, agree, disagree, multiplicity)
        np.testing.assert_allclose(value, expected, rtol=1e-7)


def _simulate_prior(n_items, n_annotators):
    """Parameters from the hierarchical model's prior (hyper-parameters on the half-square),
    then every annotator labels every item."""

    def simulate(rng):
        sens_mean = rng.beta(2.0, 1.0)
        spec_mean = rng.uniform(1.0 - sens_mean, 1.0)
        sens_scale, spec_scale = rng.uniform(0.0, 1.0, 2) ** -2
        sens = rng.beta(sens_mean * sens_scale, (1 - sens_mean) * sens_scale, n_annotators)
        spec = rng.beta(spec_mean * spec_scale, (1 - spec_mean) * spec_scale, n_annotators)
        q = rng.beta(1.0, 1.0)
        c = rng.random(n_items) < q
        item = np.repeat(np.arange(n_items), n_annotators)
        annotator = np.tile(np.arange(n_annotators), n_items)
        label = (rng.random(item.size) < np.where(c[item], sens[annotator],
                                                  1 - spec[annotator])).astype(int)
        labels = pl.data.Labels(item, annotator, label, np.arange(n_items),
                                np.arange(n_annotators), np.array(["no", "yes"]))
        truth = {"prevalence": q, "sensitivity": sens, "specificity": spec,
                 "sensitivity_mean": sens_mean, "specificity_mean": spec_mean}
        return truth, labels

    return simulate


@pytest.mark.slow
def test_simulation_based_calibration_of_the_collapsed_sampler():
    simulate = _simulate_prior(n_items=30, n_annotators=4)
    truth, _ = simulate(np.random.default_rng(0))
    result = simulation_based_calibration(
        lambda labels: ab.build(labels, sampler="collapsed", plausibility=False), simulate,
        var_names=list(truth), n_simulations=60, draws=200, chains=2, thin=4, tune=50, seed=4,
        log_likelihood=False)
    for variable, p in result.p_values(bins=10).items():
        assert p > 1e-3, (variable, p)


def _crowd(seed, n_items=12, n_workers=20):
    """Three labels an item from workers drawn at random: nearly every item its own pattern."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), 3)
    worker = np.concatenate([rng.choice(n_workers, 3, replace=False) for _ in range(n_items)])
    return pl.data.Labels(item, worker, rng.integers(0, 2, item.size), np.arange(n_items),
                          np.arange(n_workers), np.array(["no", "yes"]))


def test_sampler_choice_and_refusals():
    crowd = _crowd(0)

    def step_of(model):
        return declared_gibbs(model)[0].step

    # every item its own pattern: collapsed; a tempering reliability: the joint sweep
    assert step_of(ab.build(crowd)) is collapsed.AnnotatorBetaCollapsedGibbs
    assert step_of(ab.build(crowd, reliability=0.5)) is not collapsed.AnnotatorBetaCollapsedGibbs
    # the same three labels on 200 items: two patterns hold them, the joint sweep is cheaper
    item = np.repeat(np.arange(200), 3)
    repeated = pl.data.Labels(item, np.tile(np.arange(3), 200), (item % 2).astype(int),
                              np.arange(200), np.arange(3), np.array(["no", "yes"]))
    assert step_of(ab.build(repeated)) is not collapsed.AnnotatorBetaCollapsedGibbs
    with pytest.raises(ValueError, match="reliability must be a whole number"):
        ab.build(crowd, reliability=0.5, sampler="collapsed")
    with pytest.raises(ValueError, match="sampler must be one of"):
        ab.build(crowd, sampler="gibbs")


def test_a_point_from_elsewhere_redraws_the_classes():
    """The step keeps its classes between the points it wrote and draws them afresh from
    ``p(c | q, theta, x)`` at a point it did not write (a chain's start, another step)."""
    model = ab.build(_crowd(1), sampler="collapsed")
    [declaration] = declared_gibbs(model)
    step = declaration.instantiate(model)
    step.setup_chain(np.random.default_rng(2), 0, 10)
    point = model.initial_point()
    written, _ = step.step(point)
    assert step._written(written) and not step._written(point)
    classes = step._state[0].copy()
    moved = dict(written, prevalence_logodds__=written["prevalence_logodds__"] + 0.5)
    step.step(moved)  # redraws, then sweeps: a consistent state again
    counts, class_counts = collapsed.count_classes(
        step._state[0], step.offsets, step.annotator, step.label, step.index, step.block_of, 1,
        int(step.sizes.max()))
    np.testing.assert_array_equal(step._state[2], counts)
    np.testing.assert_array_equal(step._state[3], class_counts)
    assert classes.shape == step._state[0].shape
