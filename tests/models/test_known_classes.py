"""Known classes (gold items): clamping an item's class is conditioning on it.

The independent route is enumeration: on a few items, the Dawid–Skene family's classes have
the closed-form posterior ``p(z | x)`` with every annotator parameter and the prevalence
integrated out (Dirichlet–multinomial terms); the clamped posterior must equal it restricted
to ``z_known = k`` and renormalised. Every model that takes known classes keeps a known
item's plausibility at the one-hot of its class in every draw.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln, logsumexp

import plausible as pl
from plausible.data import Labels
from plausible.models import dawid_skene, ordered_probit
from posterior_agreement import assert_same_posterior

# 5 items, 3 annotators, 2 classes: item "e" is split, its known class decides the others'
FRAME = pd.DataFrame({
    "task": list("aaabbbcccddee"),
    "worker": ["w1", "w2", "w3"] * 4 + ["w1"],
    "label": [0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0],
})
KNOWN = pd.Series({"e": 1, "c": 1})


def _log_dirichlet_multinomial(counts, concentration):
    """``log p`` of one sequence with these ``counts (..., K)`` under ``Dirichlet(concentration)``
    integrated out."""
    return (gammaln(concentration.sum(-1)) - gammaln(concentration.sum(-1) + counts.sum(-1))
            + (gammaln(concentration + counts) - gammaln(concentration)).sum(-1))


def _enumerated(labels: Labels, log_joint) -> np.ndarray:
    """``P(z_i = c | x, z_known)`` ``(item, class)`` by enumerating every class vector."""
    C, I = labels.n_classes, labels.n_items
    vectors = np.array(list(itertools.product(range(C), repeat=I)))
    keep = np.ones(len(vectors), bool)
    if labels.known is not None:
        for i in np.flatnonzero(labels.known >= 0):
            keep &= vectors[:, i] == labels.known[i]
    vectors = vectors[keep]
    log_p = np.array([log_joint(z) for z in vectors])
    weight = np.exp(log_p - logsumexp(log_p))
    return np.stack([np.bincount(vectors[:, i], weight, minlength=C) for i in range(I)])


def _full_joint(labels, beta, a):
    def log_joint(z):
        C, J = labels.n_classes, labels.n_annotators
        n = np.zeros((J, C, C))
        np.add.at(n, (labels.annotator, z[labels.item], labels.label), 1)
        return (_log_dirichlet_multinomial(np.bincount(z, minlength=C), a)
                + _log_dirichlet_multinomial(n, beta[None]).sum())
    return log_joint


def _one_coin_joint(labels, prior, a):
    def log_joint(z):
        C, J = labels.n_classes, labels.n_annotators
        right = np.bincount(labels.annotator, labels.label == z[labels.item], minlength=J)
        total = np.bincount(labels.annotator, minlength=J)
        counts = np.stack([right, total - right], 1)
        return (_log_dirichlet_multinomial(np.bincount(z, minlength=C), a)
                + _log_dirichlet_multinomial(counts, np.asarray(prior)).sum()
                - (total - right).sum() * np.log(C - 1))
    return log_joint


@pytest.fixture(scope="module")
def labels():
    return Labels.from_frame(FRAME).with_known(KNOWN)


@pytest.mark.parametrize("sampler", ["joint", "collapsed"])
@pytest.mark.parametrize("member", ["full", "one-coin"])
def test_clamping_equals_conditioning_by_enumeration(labels, member, sampler):
    a = np.ones(2)
    if member == "full":
        beta = dawid_skene.confusion_concentration(2, (4.0, 1.0))
        model = dawid_skene.build(labels, sampler=sampler)
        joint = _full_joint(labels, beta, a)
    else:
        model = dawid_skene.build_one_coin(labels, sampler=sampler)
        joint = _one_coin_joint(labels, (4.0, 1.0), a)
    exact = _enumerated(labels, joint)
    trace = pl.sample(model, draws=3000, chains=2, seed=1, progressbar=False)
    p = trace.posterior["plausibility"].transpose("chain", "draw", ...).values.astype(float)
    se = pl.diagnostics.mcse_mean(p)
    z = np.abs(p.mean((0, 1)) - exact) / np.maximum(se, 1e-12)
    free = labels.known < 0
    assert z[free].max() < 4.5
    assert (p[:, :, ~free] == np.eye(2)[labels.known[~free]]).all()  # one-hot in every draw
    # the known classes carry information: the free items' posterior moved
    unknown = _enumerated(Labels.from_frame(FRAME), joint)
    assert not np.allclose(unknown, exact, atol=0.02)


@pytest.mark.parametrize("name", list(pl.models.available("labels").index))
def test_every_label_model_keeps_the_known_classes(labels, name):
    if pl.models.entry(name).plausibility == pl.models.ITEM_DISTRIBUTION:
        # an item's own distribution over the classes has no one true class to clamp
        with pytest.raises(ValueError, match="known classes"):
            pl.models.get(name)(labels)
        return
    model = pl.models.get(name)(labels)
    trace = pl.sample(model, draws=60, tune=30, chains=2, seed=3, progressbar=False,
                      check_convergence=False)
    p = trace.posterior["plausibility"].transpose("chain", "draw", "item", "class").values
    rows = labels.known >= 0
    assert (p[:, :, rows] == np.eye(2)[labels.known[rows]]).all(), name
    assert np.isfinite(trace.log_likelihood["labels"].values).all()


def test_the_nuts_build_clamps_the_same_posterior(labels):
    """Ordered probit's Gibbs sampler against NUTS on the graph with the known grades
    masked (an independent route through the model's PyMC graph)."""
    gibbs = pl.sample(ordered_probit.build(labels), draws=1000, chains=2, seed=5,
                      progressbar=False)
    nuts = pl.sample(ordered_probit.build(labels, gibbs=False), draws=400, tune=300, chains=2,
                     seed=5, progressbar=False)
    assert_same_posterior(gibbs, nuts, ["plausibility", "class_prior"])


def test_annotator_beta_clamps_its_patterns_as_nuts_does_on_the_masked_graph(labels):
    """Annotator-beta pools items by label pattern; a known item is a pattern of its own
    whose class draw is fixed. Its Gibbs sweep against NUTS on the graph with the known
    patterns' other class removed."""
    from plausible.models import annotator_beta

    gibbs = pl.sample(annotator_beta.build(labels, accuracy="pooled"), draws=1000, chains=2,
                      seed=2, progressbar=False)
    nuts = pl.sample(annotator_beta.build(labels, accuracy="pooled", gibbs=False), draws=500,
                     tune=300, chains=2, seed=2, progressbar=False)
    assert_same_posterior(gibbs, nuts, ["plausibility", "prevalence", "sensitivity"])
    rows = labels.known >= 0
    p = gibbs.posterior["plausibility"].transpose("chain", "draw", "item", "class").values
    assert (p[:, :, rows] == np.eye(2)[labels.known[rows]]).all()


def test_known_items_log_likelihood_is_the_known_class_term(labels):
    trace = pl.sample(dawid_skene.build(labels), draws=20, tune=5, chains=1, seed=0,
                      progressbar=False)
    pi = trace.posterior["class_prior"].values[0]
    theta = trace.posterior["confusion"].transpose("chain", "draw", ...).values[0]
    L = dawid_skene.class_log_likelihood(labels, theta)  # (draw, item, class)
    log_joint = np.log(pi)[:, None, :] + L
    expected = np.where(labels.known >= 0,
                        np.take_along_axis(log_joint, np.maximum(labels.known, 0)[None, :, None],
                                           axis=2)[..., 0],
                        logsumexp(log_joint, axis=2))
    np.testing.assert_allclose(trace.log_likelihood["labels"].values[0], expected, rtol=1e-10)


def test_builders_take_known_and_refuse_what_is_not_a_known_class():
    model = dawid_skene.build(FRAME, known={"e": 0})
    assert model is not None
    with pytest.raises(ValueError, match="item 'zz' has no labels"):
        dawid_skene.build(FRAME, known={"zz": 0})
    with pytest.raises(ValueError, match="class 7 is not one of the classes"):
        dawid_skene.build(FRAME, known={"a": 7})
    with pytest.raises(ValueError, match="known= .* needs a label model; dirichlet takes votes"):
        pl.aggregate(FRAME, "dirichlet", known={"e": 0})
    with pytest.raises(ValueError, match="known= .* is for label models"):
        pl.models.get("dirichlet")(pl.data.Votes.from_counts([[1, 2]]), known={0: 1})


@pytest.mark.slow  # NUTS; easy-hard keeps its known classes in the quick suite (every label model)
def test_easy_hard_clamps_as_nuts_does_on_the_masked_graph(labels):
    """Easy-hard's states (class and easy/hard) pooled by pattern: a known item keeps the two
    states of its class. Its Gibbs sweep against NUTS on the graph with the other class's
    states masked."""
    from plausible.models import easy_hard

    gibbs = pl.sample(easy_hard.build(labels), draws=1500, chains=2, seed=4, progressbar=False)
    nuts = pl.sample(easy_hard.build(labels, compiled=False), draws=500, tune=300, chains=2,
                     seed=4, progressbar=False, check_convergence=False)
    assert_same_posterior(gibbs, nuts, ["plausibility", "subclass_prior"])
    rows = labels.known >= 0
    p = gibbs.posterior["plausibility"].transpose("chain", "draw", "item", "class").values
    assert (p[:, :, rows] == np.eye(2)[labels.known[rows]]).all()
