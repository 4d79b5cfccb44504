"""The easy/hard latent class model (:mod:`plausible.models.easy_hard`): its Gibbs sampler
against NUTS on the same model, its per-item log-likelihood against enumeration, and its
replicated labels."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

import plausible as pl
from plausible.data.labels import Labels
from plausible.models import easy_hard

from posterior_agreement import assert_same_posterior


def simulated_labels(n_items=60, n_annotators=4, seed=0):
    """Binary labels: a third of the items easy (every annotator right with 0.95), the
    others hard (accuracies 0.6-0.8, each annotator its own)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.4
    easy = rng.random(n_items) < 1 / 3
    accuracy = np.where(easy[:, None], 0.95, rng.uniform(0.6, 0.8, n_annotators)[None, :])
    right = rng.random((n_items, n_annotators)) < accuracy
    item, annotator = np.nonzero(rng.random((n_items, n_annotators)) < 0.9)
    label = np.where(right[item, annotator], truth[item], ~truth[item]).astype(int)
    return Labels(item, annotator, label, np.arange(n_items), np.arange(n_annotators),
                  np.arange(2))


@pytest.mark.slow
def test_gibbs_matches_nuts_on_the_same_model():
    """Exact Gibbs over the states (tempered, reliability 0.8) against NUTS with the states
    summed out: subclass weights, confusion rows and plausibilities within 4.5 MCSE."""
    labels = simulated_labels()
    gibbs = pl.sample(easy_hard.build(labels, reliability=0.8), draws=2000, chains=4, seed=1,
                      log_likelihood=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(easy_hard.build(labels, reliability=0.8, compiled=False), draws=1000,
                         chains=4, seed=2, progressbar=False, log_likelihood=False,
                         target_accept=0.9)
    assert pl.diagnostics.convergence_report(gibbs).ok
    assert_same_posterior(gibbs, nuts, ("subclass_prior", "confusion", "plausibility"))


def test_log_likelihood_enumerates_the_states_and_replicates_keep_the_design():
    """Each item's term is ``log sum_s w_s prod_k theta_{j_k}[s, x_k]^gamma`` by a plain loop;
    every annotator shares the easy rows; replicated labels are classes in the design."""
    labels = simulated_labels(n_items=15)
    trace = pl.sample(easy_hard.build(labels, reliability=1.5), draws=4, chains=1, seed=0,
                      check_convergence=False)
    posterior = trace.posterior
    for draw in (0, 3):
        w = posterior["subclass_prior"].values[0, draw].astype(float)
        theta = posterior["confusion"].values[0, draw].astype(float)
        assert np.allclose(theta[:, 0::2], theta[:1, 0::2])  # easy rows shared
        for i in range(labels.n_items):
            terms = np.log(w).copy()
            for k in np.flatnonzero(labels.item == i):
                terms += 1.5 * np.log(theta[labels.annotator[k], :, labels.label[k]])
            np.testing.assert_allclose(trace.log_likelihood["labels"].values[0, draw, i],
                                       logsumexp(terms), rtol=1e-10)
    replicated = easy_hard.replicate_labels(trace, labels, draws=3, seed=0)
    assert replicated.shape == (3, labels.n_annotations)
    assert set(np.unique(replicated)) <= {0, 1}
