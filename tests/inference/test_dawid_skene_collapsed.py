"""The collapsed class sweeps of full Dawid–Skene, one-coin, MACE and hierarchical Dawid–Skene
against brute force: the class conditional against the ratio of enumerated joint marginals
``p(z, x)`` (parameters integrated out in closed form), the chain's class marginals against
``p(z | x)`` enumerated over every configuration, and the recorded parameters and
plausibilities against the joint scan's posterior on the same data, and simulation-based
calibration of one-coin's, MACE's and hierarchical Dawid–Skene's (MACE's and the hierarchical
model's collapsed scans against NUTS: ``tests/models/test_dawid_skene.py``)."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

import plausible as pl
from plausible.models.dawid_skene import collapsed
from plausible.models.dawid_skene import members
from plausible.models.dawid_skene.sampler import Design, DawidSkeneKernel, sample_dawid_skene
from plausible.inference.sbc import simulation_based_calibration

from posterior_agreement import assert_same_posterior


def log_dm(counts, prior):
    """log of the Dirichlet-multinomial sequence probability of ``counts`` under ``prior``
    (last axis), summed over the leading axes."""
    return float(np.sum(gammaln(prior.sum(-1)) - gammaln(prior.sum(-1) + counts.sum(-1))
                        + np.sum(gammaln(prior + counts) - gammaln(prior), axis=-1)))


def log_joint(labels, z, a, member, gamma):
    """``log p(z, x)`` with ``pi`` and the annotator parameters integrated out; every label
    counted ``gamma`` times."""
    C = labels.n_classes
    m = np.bincount(z, minlength=C)
    n = np.zeros((labels.n_annotators, C, C))
    np.add.at(n, (labels.annotator, z[labels.item], labels.label), gamma)
    total = log_dm(m.astype(float), a)
    if isinstance(member, members.FullConfusion):
        return total + log_dm(n, np.broadcast_to(member.beta, n.shape))
    if isinstance(member, members.Mace):
        return total + sum(mace_log_marginal(labels, z, member, j, gamma)
                           for j in range(labels.n_annotators))
    right = np.trace(n, axis1=1, axis2=2)
    wrong = n.sum(axis=(1, 2)) - right
    prior = np.array([member.a, member.b])
    return (total + log_dm(np.stack([right, wrong], -1), np.broadcast_to(prior, (len(right), 2)))
            - wrong.sum() * math.log(C - 1))


def mace_log_marginal(labels, z, member, j, gamma):
    """``log p(x_j | z)`` of annotator ``j``'s labels under MACE with its competence and
    strategy integrated out, summed over which of the copies (``gamma`` per label) that agree
    with their item's class are truthful, subset by subset (disagreeing copies are spam)."""
    x = np.repeat(labels.label[labels.annotator == j], gamma)
    agree = x == np.repeat(z[labels.item[labels.annotator == j]], gamma)
    n, C = x.size, labels.n_classes
    terms = []
    for truthful in itertools.product([False, True], repeat=int(agree.sum())):
        is_truthful = np.zeros(n, bool)
        is_truthful[np.flatnonzero(agree)] = truthful
        t = int(is_truthful.sum())
        spam = np.bincount(x[~is_truthful], minlength=C).astype(float)
        terms.append(log_dm(np.array([t, n - t], float), np.array([member.a, member.b]))
                     + log_dm(spam, member.delta))
    return float(np.logaddexp.reduce(terms))


def small(n_items=6, n_annotators=3, n_classes=3, seed=0, repeat=True):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n_items), 2)
    annotator = rng.integers(0, n_annotators, item.size)
    if repeat:  # one annotator labels item 0 twice
        annotator[:2] = 0
    label = rng.integers(0, n_classes, item.size)
    return pl.data.Labels(item, annotator, label, np.arange(n_items), np.arange(n_annotators),
                          np.arange(n_classes))


class Uniforms:
    """A generator whose ``random(n)`` gives the chosen uniforms (the sweep's class draws)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)

    def random(self, n):
        assert n == self.values.size
        return self.values.copy()


MEMBERS = {"full": lambda C: members.FullConfusion(np.full((C, C), 1.0) + 2.0 * np.eye(C)),
           # every entry its own, not symmetric: a row or column mixed up shows
           "asymmetric": lambda C: members.FullConfusion(np.arange(1.0, C * C + 1).reshape(C, C)
                                                         / C),
           "one-coin": lambda C: members.OneCoin((2.0, 1.5))}


@pytest.mark.parametrize("name", list(MEMBERS))
@pytest.mark.parametrize("gamma", [1, 2])
def test_each_item_s_class_is_drawn_from_the_ratio_of_joint_marginals(name, gamma):
    labels = small()
    C, member = labels.n_classes, MEMBERS[name](labels.n_classes)
    a = np.array([1.0, 2.0, 1.5])
    design = Design(labels)
    z = np.array([0, 1, 2, 0, 1, 2])
    kernel = DawidSkeneKernel(design, member, a, gamma, collapsed=True)
    state = kernel.load({"true_class": z}, np.random.default_rng(0))
    # the first item's conditional, by brute force
    log_p = np.array([log_joint(labels, np.r_[c, z[1:]], a, member, gamma) for c in range(C)])
    expected = np.exp(log_p - log_p.max())
    expected /= expected.sum()
    # inverse CDF: u just below each cumulative boundary gives that class
    for c, bound in enumerate(np.cumsum(expected)[:-1]):
        for u, want in ((bound - 1e-9, c), (bound + 1e-9, c + 1)):
            s = kernel.load({"true_class": z}, np.random.default_rng(0))
            uniforms = np.full(labels.n_items, 0.5)
            uniforms[0] = u
            member.collapsed_sweep(Uniforms(uniforms), design, a, gamma, s.z, s.counts[0],
                                   s.class_counts[0], s.collapsed, s.member_state)
            assert s.z[0] == want, (c, u)
    # the statistics kept in place equal those counted afresh
    member.collapsed_sweep(np.random.default_rng(1), design, a, gamma, state.z, state.counts[0],
                           state.class_counts[0], state.collapsed, state.member_state)
    fresh = kernel.load({"true_class": state.z}, np.random.default_rng(0))
    np.testing.assert_array_equal(state.counts, fresh.counts)
    np.testing.assert_array_equal(state.class_counts, fresh.class_counts)
    for kept, counted in zip(state.collapsed, fresh.collapsed):  # statistics and log tables
        np.testing.assert_array_equal(kept, counted)


def test_hierarchical_sweep_is_full_dawid_skene_s_at_the_current_population():
    """Given the population ``alpha_c = kappa_c mu_c``, hierarchical Dawid–Skene's rows have
    the prior Dirichlet(alpha_c): its class draws are full Dawid–Skene's (checked against
    enumeration above) with ``beta = alpha``, uniform for uniform."""
    labels = small(n_items=40, seed=7)
    C, a, design = labels.n_classes, np.array([1.0, 2.0, 1.5]), Design(labels)
    kappa, mu = np.array([3.0, 12.0, 0.7]), np.random.default_rng(4).dirichlet(np.ones(C), C)
    state = np.concatenate([np.log(kappa)[:, None], np.log(mu) + 0.3], 1)  # g_c: any scale
    hierarchical = members.Hierarchical(np.ones((C, C)), (2.0, 0.1), np.full((C, C), 1 / C))
    full = members.FullConfusion(kappa[:, None] * mu)
    z = np.random.default_rng(5).integers(0, C, labels.n_items)
    runs = []
    for member in (hierarchical, full):
        s = DawidSkeneKernel(design, member, a, 2, collapsed=True).load(
            {"true_class": z, "population_confusion": mu, "concentration": kappa},
            np.random.default_rng(0))
        for seed in range(5):
            member.collapsed_sweep(np.random.default_rng(seed), design, a, 2, s.z, s.counts[0],
                                   s.class_counts[0], s.collapsed, state)
        runs.append(s.z.copy())
    np.testing.assert_array_equal(*runs)
    assert (runs[0] != z).any()


@pytest.mark.parametrize("name, gamma", [("full", 1), ("one-coin", 1), ("mace", 1),
                                         ("mace", 2)])
def test_the_chain_s_class_marginals_match_enumeration(name, gamma):
    """MACE's chain also carries each label group's truthful copies: its class marginals are
    those of ``p(z | x)`` with every spam indicator summed out (``mace_log_marginal``); with
    ``gamma = 2`` every group has several copies (and item 0 two labels by annotator 0)."""
    labels = small(n_items=5, n_classes=2, seed=3)
    C = labels.n_classes
    member = (members.Mace((2.0, 1.0), np.ones(C), gamma) if name == "mace"
              else MEMBERS[name](C))
    a = np.array([1.0, 1.0])
    configs = np.array(list(itertools.product(range(C), repeat=labels.n_items)))
    log_p = np.array([log_joint(labels, z, a, member, gamma) for z in configs])
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    expected = np.stack([(p[:, None] * (configs == c)).sum(0) for c in range(C)], -1)
    trace = sample_dawid_skene(labels, member=member, class_concentration=a, draws=4000,
                               chains=4, seed=2, tune=50, collapsed=True, reliability=gamma)
    # the plausibility of a draw is P(z_i | pi, theta, x): its mean is P(z_i | x)
    mean = trace.posterior["plausibility"].mean(("chain", "draw")).values
    np.testing.assert_allclose(mean, expected, atol=0.015)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dawid-skene", "one-coin"])
def test_collapsed_and_joint_scans_sample_the_same_posterior(name):
    labels = pl.data.simulate_glad(80, 6, n_classes=3, seed=4).labels
    build = pl.models.get(name)
    joint = pl.sample(build(labels), draws=1500, seed=1, progressbar=False,
                      check_convergence=False, log_likelihood=False)
    folded = pl.sample(build(labels, sampler="collapsed"), draws=1500, seed=2,
                       progressbar=False, check_convergence=False, log_likelihood=False)
    assert_same_posterior(folded, joint, [v for v in joint.posterior.data_vars])


def test_hundreds_of_classes_take_the_logs_as_they_go(monkeypatch):
    """Past the table limit the numerator logs are computed in the sweep: same draws."""
    labels = small(n_items=30, seed=6)
    member = MEMBERS["full"](3)
    runs = []
    for limit in (collapsed.TABLE_LIMIT, 0):
        monkeypatch.setattr(collapsed, "TABLE_LIMIT", limit)
        runs.append(sample_dawid_skene(labels, member=member, class_concentration=np.ones(3),
                                       draws=30, chains=2, seed=1, collapsed=True))
    np.testing.assert_array_equal(runs[0].posterior["confusion"].values,
                                  runs[1].posterior["confusion"].values)


def test_collapsed_sampler_refuses_what_it_cannot_sample():
    labels = small()
    design = Design(labels)
    with pytest.raises(ValueError, match="whole number"):
        DawidSkeneKernel(design, MEMBERS["full"](3), np.ones(3), 1.5, collapsed=True)
    easy_hard_like = object()  # a member with no collapsed sweep
    with pytest.raises(ValueError, match="sampler='joint'"):
        DawidSkeneKernel(design, easy_hard_like, np.ones(3), 1, collapsed=True)


@pytest.mark.parametrize("member, gamma", [(MEMBERS["full"](3), 1),
                                           (members.Mace((2.0, 1.0), np.ones(3), 2), 2)])
def test_same_seed_same_draws(member, gamma):
    labels = small(n_items=30, seed=5)
    runs = [sample_dawid_skene(labels, member=member, class_concentration=np.ones(3),
                               draws=20, chains=2, seed=9, collapsed=True, cores=cores,
                               reliability=gamma)
            for cores in (1, 2)]
    for name in runs[0].posterior.data_vars:
        np.testing.assert_array_equal(runs[0].posterior[name].values, runs[1].posterior[name].values)


def _simulate_members(name, n_items, n_annotators, C):
    """``simulate(rng) -> (truth, labels)`` from the registered model ``name``'s default
    priors (every annotator labels every item) and the names of its parameters."""
    beta = np.ones((C, C)) + 3.0 * np.eye(C)  # confusion_prior (4, 1)

    def simulate(rng):
        pi = rng.dirichlet(np.ones(C))
        if name == "one-coin":
            accuracy = rng.beta(4.0, 1.0, n_annotators)
            theta = members.OneCoin.confusion({"accuracy": accuracy}, C)
            truth = {"accuracy": accuracy}
        elif name == "mace":
            competence = rng.beta(2.0, 1.0, n_annotators)
            strategy = rng.dirichlet(np.ones(C), n_annotators)
            theta = members.Mace.confusion({"competence": competence, "strategy": strategy}, C)
            truth = {"competence": competence, "strategy": strategy}
        elif name == "learned-prior-dawid-skene":  # (log d, log o) normal, truncated o < d
            while True:
                log_d, log_o = rng.normal((math.log(4.0), 0.0), 1.5)
                if log_o < log_d:
                    break
            d, o = math.exp(log_d), math.exp(log_o)
            prior = np.full((C, C), o) + (d - o) * np.eye(C)
            theta = np.stack([[rng.dirichlet(prior[c]) for c in range(C)]
                              for _ in range(n_annotators)])
            truth = {"prior_diagonal": d, "prior_off_diagonal": o, "confusion": theta}
        else:  # hierarchical Dawid-Skene
            mu = np.stack([rng.dirichlet(beta[c]) for c in range(C)])
            kappa = rng.gamma(2.0, 1 / 0.1, C)
            theta = np.stack([[rng.dirichlet(kappa[c] * mu[c]) for c in range(C)]
                              for _ in range(n_annotators)])
            truth = {"population_confusion": mu, "concentration": kappa, "confusion": theta}
        z = rng.choice(C, n_items, p=pi)
        item = np.repeat(np.arange(n_items), n_annotators)
        annotator = np.tile(np.arange(n_annotators), n_items)
        cumulative = np.cumsum(theta[annotator, z[item]], axis=1)
        label = np.minimum((rng.random((item.size, 1)) > cumulative).sum(1), C - 1)
        labels = pl.data.Labels(item, annotator, label, np.arange(n_items),
                                np.arange(n_annotators), np.arange(C))
        return {"class_prior": pi, **truth}, labels

    return simulate


@pytest.mark.slow
@pytest.mark.parametrize("name", ["one-coin", "mace", "hierarchical-dawid-skene",
                                  "learned-prior-dawid-skene"])
def test_simulation_based_calibration_of_the_collapsed_sweeps(name):
    """Full Dawid–Skene's collapsed sweep: ``tests/inference/test_dawid_skene_sampler.py``."""
    simulate = _simulate_members(name, n_items=40, n_annotators=4, C=3)
    truth, _ = simulate(np.random.default_rng(0))
    result = simulation_based_calibration(
        lambda labels: pl.models.get(name)(labels, sampler="collapsed"), simulate,
        var_names=list(truth), n_simulations=150, draws=400, chains=2, thin=8, seed=12,
        log_likelihood=False)
    for variable, p in result.p_values(bins=10).items():
        assert p > 1e-3, (variable, p)


def test_items_an_annotator_labelled_twice_are_the_ones_that_need_the_bookkeeping():
    labels = small()  # annotator 0 labels item 0 twice
    design = Design(labels)
    pairs = labels.item * labels.n_annotators + labels.annotator
    twice = np.bincount(labels.item[np.isin(pairs, np.flatnonzero(np.bincount(pairs) > 1))],
                        minlength=labels.n_items) > 0
    np.testing.assert_array_equal(design.repeats, twice)
    assert design.repeats[0]
