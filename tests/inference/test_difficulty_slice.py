"""The slice scan of the item-difficulty models against independent routes: one coordinate's
full conditional on a fine grid (numerical CDF, KS tests of many independent slice updates
started from exact draws), GLAD's scale move against the prior it must leave invariant, the
vectorised exp and log-sigmoid sums against numpy, and a mis-specified target caught."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_expit

from plausible.data.glad_simulation import simulate_glad
from plausible.inference.step_methods import difficulty_slice as ds
from plausible.inference.declarations import declared_gibbs
from plausible.maths.logspace import exp_nonpositive, sum_log1p_exp
from plausible.models import glad, su_difficulty
from plausible.maths.fallibility import error_rate

N = 20000  # independent replicates of one coordinate's update

# One coordinate's labels: partner index, label, and the partners' parameters / true classes.
PARTNER = np.array([0, 1, 2, 3, 4, 5])
LABEL = np.array([0, 0, 1, 0, 2, 0])


def _grid_cdf(log_density, lower, upper, n=200001):
    """(grid, CDF) of the normalised density on ``[lower, upper]`` (trapezoid rule)."""
    grid = np.linspace(lower, upper, n)
    log_f = log_density(grid)
    f = np.exp(log_f - log_f.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(grid))])
    return grid, cdf / cdf[-1]


def _exact_draws(rng, grid, cdf, size):
    return np.interp(rng.random(size), cdf, grid)


def _ks(draws, grid, cdf):
    return stats.kstest(draws, lambda x: np.interp(x, grid, cdf)).pvalue


def _replicated_block(kind, by_item, partner_factor, z, prior, n_classes, x0, max_steps, rng,
                      sweeps=1, gamma=1.0):
    """``sweeps`` block sweeps over N copies of the coordinate (identical labels), from x0."""
    n_labels = PARTNER.size
    offsets = np.arange(N + 1, dtype=np.int64) * n_labels
    partner = np.tile(PARTNER, N).astype(np.int32)
    label = np.tile(LABEL, N).astype(np.int32)
    x = np.array(x0, dtype=float)
    width = np.full(N, 0.7 if kind != ds.COMPLEMENT else 0.2)
    coefficients = np.empty(partner.size)
    for _ in range(sweeps):
        ds.block_sweep(rng, x, width, kind, by_item, offsets, partner, label, partner_factor, z,
                       np.asarray(prior, dtype=float), n_classes, coefficients, np.zeros(N),
                       max_steps, gamma)
    return x


# Independent routes to each full conditional (scipy, and the model's own error rate for Su).
ALPHA = np.array([1.3, -0.4, 0.8, 2.1, 0.2, 1.0])     # annotators of the item coordinate
LOG_BETA = np.array([0.5, 1.2, -0.3, 0.9, 0.0, 1.7])  # items of the annotator coordinate
ITEM_Z = np.array([0, 1, 1, 0, 2, 0])                 # true classes of those items


def _glad_annotator(x, drop=0, gamma=1.0):
    """log p(alpha | beta, z, labels) on the grid ``x`` (``drop``: labels left out; the
    labels' likelihood to the power ``gamma``, the reliability)."""
    agree = LABEL == ITEM_Z[PARTNER]
    s = np.exp(LOG_BETA[PARTNER])[:, None] * x[None, :]
    terms = np.where(agree[:, None], log_expit(s), log_expit(-s))
    return stats.norm(1, 1).logpdf(x) + gamma * terms[drop:].sum(axis=0)


def _glad_item(x, z_item=0, drop=0, gamma=1.0):
    """log p(log beta | alpha, z, labels) of an item with true class ``z_item``."""
    agree = LABEL == z_item
    s = ALPHA[PARTNER][:, None] * np.exp(x)[None, :]
    terms = np.where(agree[:, None], log_expit(s), log_expit(-s))
    return stats.norm(1, 1).logpdf(x) + gamma * terms[drop:].sum(axis=0)


PHI = np.array([0.1, 0.5, 0.05, 0.3, 0.8, 0.2])


def _su_item(x, z_item=0, prior=(1.0, 5.0), gamma=1.0):
    """log p(delta | phi, z, labels): Beta prior, r = 1 - error_rate(delta, phi)."""
    eps = error_rate(x[None, :], PHI[PARTNER][:, None], 3)
    agree = (LABEL == z_item)[:, None]
    terms = np.where(agree, np.log1p(-eps), np.log(eps / 2))
    return stats.beta(*prior).logpdf(x) + gamma * terms.sum(axis=0)


@pytest.mark.parametrize("max_steps", [0, 1, 2])
def test_glad_annotator_update_keeps_its_conditional(max_steps):
    """Exact draws of alpha | beta, z (grid CDF), one slice update each: still the conditional."""
    rng = np.random.default_rng(1)
    grid, cdf = _grid_cdf(_glad_annotator, -8, 10)
    x0 = _exact_draws(rng, grid, cdf, N)
    x1 = _replicated_block(ds.IDENTITY, False, np.exp(LOG_BETA), ITEM_Z, (1.0, 1.0), 3, x0,
                           max_steps, rng)
    assert _ks(x1, grid, cdf) > 1e-3
    assert np.mean(x1 != x0) > 0.99  # it moves


@pytest.mark.parametrize("max_steps", [0, 2])
def test_glad_item_update_keeps_its_conditional(max_steps):
    rng = np.random.default_rng(2)
    grid, cdf = _grid_cdf(_glad_item, -6, 6)
    x0 = _exact_draws(rng, grid, cdf, N)
    z = np.zeros(N, dtype=np.int64)  # every replicate is an item with true class 0
    x1 = _replicated_block(ds.EXPONENTIAL, True, ALPHA, z, (1.0, 1.0), 3, x0, max_steps, rng)
    assert _ks(x1, grid, cdf) > 1e-3


def test_su_update_keeps_its_conditional_on_the_bounded_support():
    rng = np.random.default_rng(3)
    grid, cdf = _grid_cdf(_su_item, 1e-9, 1 - 1e-9)
    x0 = _exact_draws(rng, grid, cdf, N)
    z = np.zeros(N, dtype=np.int64)
    x1 = _replicated_block(ds.COMPLEMENT, True, 1 - PHI, z, (1.0, 5.0), 3, x0, 0, rng)
    assert ((x1 > 0) & (x1 < 1)).all()
    assert _ks(x1, grid, cdf) > 1e-3


@pytest.mark.parametrize("kind", ["glad annotator", "glad item", "su item"])
def test_tempered_updates_keep_their_tempered_conditionals(kind):
    """Reliability 2.5: every kind of coordinate keeps the conditional whose labels'
    likelihood is raised to 2.5 (the prior is not), and not the untempered one."""
    gamma, rng = 2.5, np.random.default_rng(9)
    z = np.zeros(N, dtype=np.int64)
    case = {"glad annotator": (_glad_annotator, (-8, 10), ds.IDENTITY, False, np.exp(LOG_BETA),
                               ITEM_Z, (1.0, 1.0)),
            "glad item": (_glad_item, (-6, 6), ds.EXPONENTIAL, True, ALPHA, z, (1.0, 1.0)),
            "su item": (_su_item, (1e-9, 1 - 1e-9), ds.COMPLEMENT, True, 1 - PHI, z, (1.0, 5.0))}
    density, bounds, code, by_item, partner_factor, classes, prior = case[kind]
    grid, cdf = _grid_cdf(lambda x: density(x, gamma=gamma), *bounds)
    x0 = _exact_draws(rng, grid, cdf, N)
    x1 = _replicated_block(code, by_item, partner_factor, classes, prior, 3, x0, 0, rng,
                           gamma=gamma)
    assert _ks(x1, grid, cdf) > 1e-3
    plain_grid, plain_cdf = _grid_cdf(density, *bounds)
    assert _ks(x1, plain_grid, plain_cdf) < 1e-6


def test_sweeps_from_a_fixed_start_reach_the_conditional():
    """From x = 0 for every replicate, 25 sweeps with Neal's m = 2: the conditional."""
    rng = np.random.default_rng(4)
    grid, cdf = _grid_cdf(_glad_item, -6, 6)
    z = np.zeros(N, dtype=np.int64)
    x = _replicated_block(ds.EXPONENTIAL, True, ALPHA, z, (1.0, 1.0), 3, np.zeros(N), 2, rng,
                          sweeps=25)
    assert _ks(x, grid, cdf) > 1e-3


def test_a_mis_specified_target_is_caught():
    """The same KS check rejects when the reference conditional leaves out one label, and
    rejects draws from a slice update whose density drops the sign of a disagreement."""
    rng = np.random.default_rng(5)
    grid, cdf = _grid_cdf(_glad_annotator, -8, 10)
    x0 = _exact_draws(rng, grid, cdf, N)
    x1 = _replicated_block(ds.IDENTITY, False, np.exp(LOG_BETA), ITEM_Z, (1.0, 1.0), 3, x0, 0, rng)
    wrong_grid, wrong_cdf = _grid_cdf(lambda x: _glad_annotator(x, drop=1), -8, 10)
    assert _ks(x1, wrong_grid, wrong_cdf) < 1e-6
    # a sampler with a bug: every label treated as agreeing with its item's class
    buggy = _replicated_block(ds.IDENTITY, False, np.exp(LOG_BETA), LABEL,
                              (1.0, 1.0), 3, x0, 0, rng)
    assert _ks(buggy, grid, cdf) < 1e-6


def _scale_moves(rng, ability, log_beta, prior_a, prior_b, jacobian=True):
    """GLAD's scale move on each replicate (rows); ``jacobian=False``: the move without its
    ``n_a u`` term, a mis-specified target."""
    ability, log_beta = ability.copy(), log_beta.copy()
    for r in range(ability.shape[0]):
        if jacobian:
            ds.scale_move(rng, ability[r], log_beta[r], 0.5, prior_a, prior_b, 0)
            continue
        a, b = ability[r], log_beta[r]
        args = (a.sum(), (a * a).sum(), (b - prior_b[0]).sum(), 0, b.size, prior_a[0], prior_a[1],
                prior_b[1])
        u, _, _ = ds._scale_update(rng, 0.0, ds.scale_log_density(0.0, *args), -np.inf, np.inf,
                                   0.5, 0, args)
        a *= np.exp(u)
        b -= u
    return ability, log_beta


def test_scale_move_keeps_the_prior():
    """Without labels the posterior is the prior; the scale move (alpha -> e^u alpha,
    log beta -> log beta - u, u sliced with its Jacobian) must keep it: exact prior draws in,
    prior draws out (KS of alpha_0, log beta_0 and of the scale statistic mean(log |alpha|)).
    Dropping the Jacobian is caught."""
    rng = np.random.default_rng(6)
    prior_a, prior_b = np.array([1.0, 1.0]), np.array([1.0, 0.5])
    reps, J, I = 4000, 3, 4
    ability = rng.normal(*prior_a, size=(reps, J))
    log_beta = rng.normal(*prior_b, size=(reps, I))
    reference = np.log(np.abs(rng.normal(*prior_a, size=(reps, J)))).mean(axis=1)
    a1, b1 = _scale_moves(rng, ability, log_beta, prior_a, prior_b)
    assert np.mean(a1[:, 0] != ability[:, 0]) > 0.99
    assert stats.kstest(a1[:, 0], stats.norm(*prior_a).cdf).pvalue > 1e-3
    assert stats.kstest(b1[:, 0], stats.norm(*prior_b).cdf).pvalue > 1e-3
    scale = np.log(np.abs(a1)).mean(axis=1)
    assert stats.ks_2samp(scale, reference).pvalue > 1e-3
    a2, _ = _scale_moves(rng, ability, log_beta, prior_a, prior_b, jacobian=False)
    assert stats.ks_2samp(np.log(np.abs(a2)).mean(axis=1), reference).pvalue < 1e-6


def test_vectorised_exp_and_log_sigmoid_sums():
    rng = np.random.default_rng(7)
    x = -np.concatenate([np.linspace(0, 750, 300001), np.abs(rng.normal(0, 5, 10**5))])
    got = np.array([exp_nonpositive(v) for v in x[::50]])
    expected = np.exp(x[::50])
    normal = x[::50] > -708
    np.testing.assert_allclose(got[normal], expected[normal], rtol=3e-16)
    assert (got[~normal] <= np.exp(-708.0) * (1 + 1e-15)).all()
    s = np.random.default_rng(8).normal(0, 20, 2500)
    magnitude = np.abs(s)  # 2500 terms: three chunks of the product
    for t in (0.0, 0.3, 7.0):
        np.testing.assert_allclose(sum_log1p_exp(magnitude, 100, 2500, t, np.empty(2500)),
                                   np.log1p(np.exp(-magnitude[100:] * t)).sum(), rtol=1e-13)


def test_label_groups_are_csr():
    groups = ds.LabelGroups.by(np.array([2, 0, 2, 1]), np.array([5, 6, 7, 8]), np.array([1, 0, 1, 0]), 4)
    np.testing.assert_array_equal(groups.offsets, [0, 1, 2, 4, 4])
    np.testing.assert_array_equal(groups.partner, [6, 8, 5, 7])
    np.testing.assert_array_equal(groups.label, [0, 0, 1, 1])


def test_step_reads_and_writes_value_variables():
    """GLAD's step moves ability and log_inverse_difficulty only; Su's works on the log-odds
    value variables; the step runs before the class draw in each iteration; widths start
    again with each chain; bad arguments are refused."""
    labels = simulate_glad(30, 4, 3, coverage=0.7, seed=9).labels
    for module, names in [(glad, ["ability", "log_inverse_difficulty"]),
                          (su_difficulty, ["fallibility_logodds__", "difficulty_logodds__"])]:
        model = module.build(labels, plausibility=False, sweeps=2)
        declarations = declared_gibbs(model)
        assert [d.step.__name__ for d in declarations] == ["DifficultySlice", "ClassGibbs"]
        step = declarations[0].instantiate(model)
        assert step.sweeps == 2
        assert [v.name for v in step.vars] == names
        point = model.initial_point()
        new, [stats_] = step.step(point)
        assert set(new) == set(point)
        for name in point:
            moved = not np.array_equal(new[name], point[name])
            assert moved == (name in names), name
        assert np.all(np.isfinite(new[names[1]])) and stats_["difficulty_slice_evaluations"] >= 2
        step.setup_chain(np.random.default_rng(0), tune=10, draws=10)
        assert step.tune and all((w == step.initial_width).all() for w in step.widths)
    model = glad.build(labels)
    with pytest.raises(ValueError, match="link"):
        ds.DifficultySlice([model["ability"], model["log_inverse_difficulty"]], model["true_class"],
                           labels.item, labels.annotator, labels.label, 3, "dawid", (1, 1), (1, 1),
                           model=model)
    with pytest.raises(ValueError, match="log-odds"):
        ds.DifficultySlice([model["ability"], model["log_inverse_difficulty"]], model["true_class"],
                           labels.item, labels.annotator, labels.label, 3, "su", (1, 1), (1, 1),
                           model=model)
    with pytest.raises(ValueError, match="max_steps"):
        ds.DifficultySlice([model["ability"], model["log_inverse_difficulty"]], model["true_class"],
                           labels.item, labels.annotator, labels.label, 3, "glad", (1, 1), (1, 1),
                           max_steps=(0, 2), model=model)
