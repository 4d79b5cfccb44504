"""Dawid–Skene with its confusion prior learned from the crowd (``d`` on the diagonal, ``o``
off it): the prior's density against brute force, its slice draws against a numerical grid
of the conditional, the collapsed class sweep against full Dawid–Skene's at the same prior,
and the chain's class marginals against enumeration with ``(d, o)`` integrated out on a grid
(NUTS and SBC: ``tests/models/test_dawid_skene.py`` and
``tests/inference/test_dawid_skene_collapsed.py``)."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

import plausible as pl
from plausible.models.dawid_skene import members
from plausible.models.dawid_skene.sampler import Design, DawidSkeneKernel
from plausible.inference.step_methods.symmetric_prior import (symmetric_concentration, symmetric_log_density,
                                                 symmetric_scan, symmetric_summary)
from plausible.models import dawid_skene as ds

from test_dawid_skene_collapsed import Uniforms, small

MEAN, SD = np.array([math.log(4.0), 0.0]), np.array([1.5, 1.5])


def log_dm_rows(counts, beta):
    """``sum_{j, c} log DM(counts[j, c] | beta[c])`` (sequence probability), by brute force."""
    total = 0.0
    for j in range(counts.shape[0]):
        for c in range(counts.shape[1]):
            n, a = counts[j, c], beta[c]
            total += (gammaln(a.sum()) - gammaln(a.sum() + n.sum())
                      + np.sum(gammaln(a + n) - gammaln(a)))
    return total


def log_target(counts, v, gamma=1.0):
    """The conditional of ``(log d, log o)`` given whole counts, by brute force."""
    beta = symmetric_concentration(counts.shape[1], np.asarray(v))
    return (log_dm_rows(gamma * counts, beta)
            - 0.5 * np.sum(((np.asarray(v) - MEAN) / SD) ** 2))


def random_counts(seed=0, annotators=6, classes=3):
    rng = np.random.default_rng(seed)
    counts = rng.poisson(1.5, (annotators, classes, classes))
    counts[:, np.arange(classes), np.arange(classes)] += rng.poisson(4.0, (annotators, classes))
    return counts


@pytest.mark.parametrize("gamma", [1.0, 2.0])
def test_the_density_is_the_dirichlet_multinomial_of_every_row(gamma):
    counts = random_counts()
    summary = symmetric_summary(counts, gamma)
    v = np.array([1.2, -0.3])
    points = [(0.0, 0), (0.4, 0), (-0.7, 1), (1.1, 1)]  # moves along and across the ridge
    got, want = [], []
    for t, k in points:
        got.append(symmetric_log_density(t, k, v, *summary, counts.shape[1], MEAN, SD))
        half = math.sqrt(0.5)
        moved = v + t * np.array([half, half if k == 0 else -half])
        want.append(log_target(counts, moved, gamma))
    # equal up to one constant (the log-scale normal's and the sequences' normalisers)
    np.testing.assert_allclose(np.diff(got), np.diff(want), rtol=1e-10, atol=1e-9)


def test_the_slice_scan_draws_the_conditional_of_the_prior():
    """Draws of ``(log d, log o)`` given fixed counts against the conditional on a grid
    (truncated to ``o < d``): means and sds within Monte Carlo error."""
    counts = random_counts(seed=3, annotators=4)
    summary = symmetric_summary(counts)
    rng = np.random.default_rng(5)
    v = MEAN.copy()
    draws = []
    for _ in range(6000):
        symmetric_scan(rng, v, *summary, counts.shape[1], MEAN, SD, 1.0)
        draws.append(v.copy())
    draws = np.array(draws[500:])
    assert (draws[:, 1] < draws[:, 0]).all()
    grid = np.linspace(-4.0, 5.0, 181)
    log_d, log_o = np.meshgrid(grid, grid, indexing="ij")
    log_p = np.array([[log_target(counts, (a, b)) if b < a else -np.inf for b in grid]
                      for a in grid])
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    for values, draw in ((log_d, draws[:, 0]), (log_o, draws[:, 1])):
        mean = (p * values).sum()
        sd = math.sqrt((p * (values - mean) ** 2).sum())
        se = pl.diagnostics.mcse_mean(draw[None, :])
        assert abs(draw.mean() - mean) < 4.5 * se + 0.01, (draw.mean(), mean)
        assert abs(draw.std() - sd) < 0.1 * sd


def test_the_class_sweep_is_full_dawid_skene_s_at_the_current_prior():
    labels = small(n_items=40, seed=7)
    C, a, design = labels.n_classes, np.array([1.0, 2.0, 1.5]), Design(labels)
    state = np.array([1.3, -0.4])
    learned = members.LearnedPrior(MEAN, SD)
    full = members.FullConfusion(symmetric_concentration(C, state))
    z = np.random.default_rng(5).integers(0, C, labels.n_items)
    runs = []
    for member in (learned, full):
        s = DawidSkeneKernel(design, member, a, 1, collapsed=True).load(
            {"true_class": z, "prior_diagonal": math.exp(state[0]),
             "prior_off_diagonal": math.exp(state[1])}, np.random.default_rng(0))
        for seed in range(5):
            member.collapsed_sweep(Uniforms(np.random.default_rng(seed).random(labels.n_items)),
                                   design, a, 1, s.z, s.counts[0], s.class_counts[0],
                                   s.collapsed, state)
        runs.append(s.z.copy())
    np.testing.assert_array_equal(*runs)
    assert (runs[0] != z).any()


@pytest.mark.parametrize("sampler", ["collapsed", "joint"])
def test_the_chain_s_class_marginals_match_enumeration_with_the_prior_integrated(sampler):
    """Five items, two classes: ``p(z | x)`` enumerated over every class vector, with
    ``pi`` and the rows integrated out in closed form and ``(log d, log o)`` on a grid."""
    labels = small(n_items=5, n_classes=2, seed=3, repeat=False)
    C = labels.n_classes
    configs = np.array(list(itertools.product(range(C), repeat=labels.n_items)))
    grid = np.linspace(-4.0, 6.0, 121)
    log_d, log_o = (v.ravel() for v in np.meshgrid(grid, grid, indexing="ij"))
    keep = log_o < log_d
    log_d, log_o = log_d[keep], log_o[keep]
    d, o = np.exp(log_d), np.exp(log_o)
    prior = -0.5 * (((log_d - MEAN[0]) / SD[0]) ** 2 + ((log_o - MEAN[1]) / SD[1]) ** 2)
    log_p = []
    for z in configs:
        counts = np.zeros((labels.n_annotators, C, C))
        np.add.at(counts, (labels.annotator, z[labels.item], labels.label), 1)
        m = np.bincount(z, minlength=C)
        log_pi = gammaln(C) - gammaln(C + labels.n_items) + np.sum(gammaln(1 + m))
        log_rows = prior.copy()
        for row in counts.reshape(-1, C * C):  # every grid point at once
            row = row.reshape(C, C)
            for c in range(C):
                off = np.delete(row[c], c)
                log_rows += (gammaln(d + (C - 1) * o) - gammaln(d + (C - 1) * o + row[c].sum())
                             + gammaln(d + row[c, c]) - gammaln(d)
                             + np.sum(gammaln(o[:, None] + off) - gammaln(o[:, None]), axis=1))
        log_p.append(log_pi + logsumexp(log_rows))
    p = np.exp(np.array(log_p) - max(log_p))
    p /= p.sum()
    expected = np.stack([(p[:, None] * (configs == c)).sum(0) for c in range(C)], -1)
    trace = pl.sample(ds.build_learned_prior(labels, sampler=sampler), draws=3000, chains=4,
                      seed=2, progressbar=False, log_likelihood=False, check_convergence=False)
    plausibility = trace.posterior["plausibility"].transpose("chain", "draw", ...).values
    se = pl.diagnostics.mcse_mean(plausibility.astype(float))
    z_score = np.abs(plausibility.mean((0, 1)) - expected) / np.maximum(se, 1e-3)
    assert z_score.max() < 4.5, z_score


def test_same_seed_same_draws_whatever_the_cores():
    labels = small(n_items=30, seed=5)
    runs = [pl.sample(ds.build_learned_prior(labels), draws=20, chains=2, seed=9, cores=cores,
                      progressbar=False, log_likelihood=False, check_convergence=False)
            for cores in (1, 2)]
    for name in runs[0].posterior.data_vars:
        np.testing.assert_array_equal(runs[0].posterior[name].values,
                                      runs[1].posterior[name].values)


def test_the_prior_s_means_must_keep_o_below_d():
    labels = small()
    with pytest.raises(ValueError, match="log o < log d"):
        ds.build_learned_prior(labels, prior_prior=((0.0, 1.0), (1.5, 1.5)))
