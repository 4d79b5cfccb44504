"""The class-swap move of the Dawid–Skene family against brute force: its acceptance ratio
against the ratio of enumerated ``p(z | x)`` (parameters integrated out in closed form), and
on a crowd whose annotators split into two groups that contradict each other, chains that
stay in the mode they settle in without the move and reach the enumerated class marginals
with it (the known answer of the stuck-chain remedy)."""

import itertools

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible.inference.step_methods import class_swap
from plausible.models.dawid_skene import members
from plausible.models.dawid_skene.sampler import Design, DawidSkeneKernel
from plausible.inference.driver import sample_kernel

from test_dawid_skene_collapsed import MEMBERS, log_joint, small

PRIOR = np.ones((2, 2)) + 3 * np.eye(2)
"""Dawid–Skene's default confusion prior for two classes: 4 on the diagonal, 1 off it."""


def split_crowd(n_items=10, n_contrary=9, per_group=3):
    """Two groups of ``per_group`` annotators: the first labels every item ``y_i = i % 2``,
    the second the other class on the first ``n_contrary`` items. Either group may be the
    right one; the posterior has a mode for each, and the items between them improbable."""
    y = np.arange(n_items) % 2
    item = np.r_[np.tile(np.arange(n_items), per_group), np.tile(np.arange(n_contrary), per_group)]
    annotator = np.r_[np.repeat(np.arange(per_group), n_items),
                      np.repeat(np.arange(per_group, 2 * per_group), n_contrary)]
    label = np.where(annotator < per_group, y[item], 1 - y[item])
    labels = pl.data.Labels(item, annotator, label, np.arange(n_items),
                            np.arange(2 * per_group), np.arange(2))
    return labels, y


def enumerated_marginals(labels, member, a):
    """``P(z_i = c | x)`` ``(item, class)`` over every class vector."""
    C = labels.n_classes
    configs = np.array(list(itertools.product(range(C), repeat=labels.n_items)))
    log_p = np.array([log_joint(labels, z, a, member, 1) for z in configs])
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    return np.stack([p @ (configs == c) for c in range(C)], -1)


def hierarchical_state(rng, C):
    """A hierarchical member's state ``(log kappa_c, log g_c)`` and the population ``alpha_c
    = kappa_c mu_c`` it stands for, computed here from its definition."""
    state = rng.normal(size=(C, C + 1))
    mu = np.exp(state[:, 1:]) / np.exp(state[:, 1:]).sum(axis=1, keepdims=True)
    return state, np.exp(state[:, :1]) * mu


@pytest.mark.parametrize("name", [*MEMBERS, "hierarchical"])
@pytest.mark.parametrize("gamma", [1, 2])
def test_the_acceptance_ratio_is_the_ratio_of_enumerated_posteriors(name, gamma):
    """``log p(tau z | x) - log p(z | x)`` for every pair of classes, from counts split over
    two item parts (the threads of a chain) as the sweep keeps them."""
    labels = small(n_items=6, n_classes=3, seed=4)
    C, rng = labels.n_classes, np.random.default_rng(5)
    a = np.array([1.0, 2.0, 1.5])
    if name == "hierarchical":
        state, alpha = hierarchical_state(rng, C)
        member = members.Hierarchical(np.ones((C, C)), (2.0, 1.0), np.full((C, C), 1 / C))
        brute = members.FullConfusion(alpha)
    else:
        state, member = None, MEMBERS[name](C)
        brute = member
    # the sweep's counts of z, which do not depend on the member
    kernel = DawidSkeneKernel(Design(labels), members.FullConfusion(np.ones((C, C))), a, gamma,
                              n_parts=2)
    for z in rng.integers(0, C, (4, labels.n_items)):
        counts = kernel.load({"true_class": z}, rng).counts
        class_counts = np.bincount(z, minlength=C)
        for pair in itertools.combinations(range(C), 2):
            swapped = z.copy()
            class_swap.relabel(swapped, *pair)
            expected = (log_joint(labels, swapped, a, brute, gamma)
                        - log_joint(labels, z, a, brute, gamma))
            got = (class_swap.class_prior_log_ratio(a, class_counts[None], *pair)
                   + member.swap_log_ratio(counts, *pair, float(gamma), state))
            assert got == pytest.approx(expected, abs=1e-9), pair


def right_class_plausibility(labels, y, member, *, collapsed, class_swaps, draws=1000):
    """``(chain, draw)``: each draw's mean plausibility of ``y`` over the items."""
    kernel = DawidSkeneKernel(Design(labels), member, np.ones(2), 1.0, collapsed=collapsed,
                              class_swaps=class_swaps)
    trace = sample_kernel(kernel, draws=draws, chains=4, seed=1, tune=100)
    plausibility = trace.posterior["plausibility"].transpose("chain", "draw", ...).values
    return plausibility[..., np.arange(labels.n_items), y], trace


@pytest.mark.parametrize("name, collapsed", [("full", False), ("full", True),
                                             ("one-coin", False)])
def test_chains_stuck_in_a_relabelled_mode_reach_the_enumerated_posterior(name, collapsed):
    """Three annotators against three (the second group silent on one item): the first
    group's reading holds 0.74 of the posterior by enumeration (one-coin: 0.57). Without the
    move every chain stays in one reading (its plausibilities near 0 or 1 throughout); with
    it the chains spend the enumerated share in each, within 4.5 MCSE."""
    labels, y = split_crowd()
    member = members.OneCoin((2.0, 1.0)) if name == "one-coin" else members.FullConfusion(PRIOR)
    expected = enumerated_marginals(labels, member, np.ones(2))[np.arange(labels.n_items), y]
    assert 0.1 < expected.mean() < 0.9  # a minor mode with real mass: the case is not trivial

    stuck, _ = right_class_plausibility(labels, y, member, collapsed=collapsed,
                                        class_swaps=False)
    chain_means = stuck.mean(axis=(1, 2))
    assert np.all(np.minimum(chain_means, 1 - chain_means) < 0.05), chain_means

    freed, trace = right_class_plausibility(labels, y, member, collapsed=collapsed,
                                            class_swaps=True)
    # a share of the proposals (one every EVERY sweeps) accepted
    assert trace.sample_stats["classes_swapped"].values.mean() * class_swap.EVERY > 0.1
    se = pl.diagnostics.mcse_mean(freed[..., None].astype(float))[0]
    assert abs(freed.mean() - expected.mean()) < 4.5 * se, (freed.mean(), expected.mean(), se)
    assert np.all(np.abs(freed.mean(axis=1).mean(axis=1) - expected.mean()) < 0.1)


def test_the_hierarchical_model_s_chains_leave_a_relabelled_mode():
    """Two groups of three that mirror each other exactly: relabelling the classes and
    exchanging the groups leaves the data unchanged, so every item's plausibility of ``y``
    is 1/2 by symmetry. The collapsed scan (the hierarchical model's default) sits in one
    reading per chain without the move and reaches 1/2 with it."""
    labels, y = split_crowd(n_contrary=10)
    C = 2
    member = members.Hierarchical(PRIOR, (2.0, 0.2), np.full((C, C), 1 / C))
    stuck, _ = right_class_plausibility(labels, y, member, collapsed=True, class_swaps=False,
                                        draws=500)
    chain_means = stuck.mean(axis=(1, 2))
    assert np.all(np.minimum(chain_means, 1 - chain_means) < 0.05), chain_means
    freed, _ = right_class_plausibility(labels, y, member, collapsed=True, class_swaps=True,
                                        draws=500)
    se = pl.diagnostics.mcse_mean(freed[..., None].astype(float))[0]
    assert abs(freed.mean() - 0.5) < 4.5 * se, (freed.mean(), se)


def test_known_items_keep_their_class_and_bound_the_swaps():
    """A swap may exchange only classes no known item holds: with two classes and one known
    item there is no move (and no statistic), with three the free pair alone; the known
    item stays one-hot in every draw."""
    labels, _ = split_crowd()
    assert class_swap.swappable_classes(3, np.array([-1, 0, -1, 0])).tolist() == [1, 2]
    known = labels.with_known(pd.Series({0: 0}))
    kernel = DawidSkeneKernel(Design(known), members.FullConfusion(PRIOR), np.ones(2), 1.0)
    assert kernel.swappable.tolist() == [1] and "classes_swapped" not in kernel.stats
    trace = sample_kernel(kernel, draws=200, chains=2, seed=0, tune=20)
    assert np.all(trace.posterior["plausibility"].isel(item=0, **{"class": 0}).values == 1)
