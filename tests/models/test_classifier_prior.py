"""A classifier's probabilities as the prior of each item's class
(:mod:`plausible.models.classifier_prior`): the compiled sampler against NUTS on the same graph
with the classes summed out, against simulation-based calibration, and seeded
reproducibility; the conditional mode the proposal is centred at."""

import warnings

import numpy as np
import pymc as pm
import pytest
from scipy.special import softmax

import plausible as pl
from plausible.data.labels import Labels
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import classifier_prior as cp
from plausible.models import dawid_skene as ds

from posterior_agreement import assert_same_posterior


def classifier_probabilities(rng, n_items, n_classes, truth=None):
    """A classifier's probabilities: a logit of 2.5 on its guess (the truth when given, with
    probability 0.8, else a random class) plus standard normal noise."""
    guess = rng.integers(n_classes, size=n_items)
    if truth is not None:
        right = rng.random(n_items) < 0.8
        guess[right] = truth[right]
    logits = rng.normal(size=(n_items, n_classes))
    logits[np.arange(n_items), guess] += 2.5
    return softmax(logits, axis=1)


def simulate(rng, n_items=40, n_annotators=3, n_classes=3, labels_per_item=2):
    """``(truth, labels, predictions)`` from the prior of full Dawid–Skene with the classifier
    prior: ``tau ~ LogNormal(0, 1)``, ``b ~ ZeroSumNormal(1.5)``, ``z_i ~ softmax(b + tau log
    p_i)``, rows ``~ Dirichlet(4 on the diagonal, 1 elsewhere)``, each item labelled by
    ``labels_per_item`` distinct annotators."""
    p = classifier_probabilities(rng, n_items, n_classes)
    tau = rng.lognormal(0.0, 1.0)
    b = rng.normal(0.0, cp.BIAS_SCALE, n_classes)
    b -= b.mean()
    z = np.array([rng.choice(n_classes, p=softmax(b + tau * np.log(row))) for row in p])
    beta = ds.confusion_concentration(n_classes, (4.0, 1.0))
    theta = np.stack([[rng.dirichlet(beta[c]) for c in range(n_classes)]
                      for _ in range(n_annotators)])
    item = np.repeat(np.arange(n_items), labels_per_item)
    annotator = np.concatenate([rng.choice(n_annotators, labels_per_item, replace=False)
                                for _ in range(n_items)])
    label = np.array([rng.choice(n_classes, p=theta[j, z[i]]) for i, j in zip(item, annotator)])
    labels = Labels(item=item, annotator=annotator, label=label, items=np.arange(n_items),
                    annotators=np.arange(n_annotators), classes=np.arange(n_classes))
    return {"temperature": tau, "class_bias": b, "confusion": theta}, labels, p


def test_gibbs_matches_nuts_with_classes_summed_out():
    _, labels, p = simulate(np.random.default_rng(4))
    gibbs = pl.sample(ds.build(labels, predictions=p), draws=2000, seed=0, progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(ds.build(labels, predictions=p, gibbs=False), draws=1000, seed=1,
                         progressbar=False, dispersion=0.3)
    assert pl.diagnostics.convergence_report(nuts).converged
    assert_same_posterior(gibbs, nuts, ("temperature", "class_bias", "confusion",
                                        "plausibility"))
    np.testing.assert_allclose(gibbs.posterior["class_bias"].sum("class"), 0.0, atol=1e-9)


def test_a_seed_gives_the_same_draws_and_pymc_runs_the_same_kernel():
    _, labels, p = simulate(np.random.default_rng(5))
    model = ds.build_learned_prior(labels, predictions=p)
    first, second = (pl.sample(model, draws=200, chains=2, seed=3, progressbar=False,
                               check_convergence=False) for _ in range(2))
    for name in ("temperature", "class_bias", "confusion", "plausibility"):
        np.testing.assert_array_equal(first.posterior[name].values, second.posterior[name].values)
    in_pymc = ds.build_learned_prior(labels, predictions=p, compiled=False)
    pymc = pm.sample(model=in_pymc, step=pl.inference.steps(in_pymc), draws=100, tune=50, chains=1,
                     random_seed=3, progressbar=False, compute_convergence_checks=False)
    assert np.isfinite(pymc.posterior["temperature"].values).all()


def test_the_proposal_centre_follows_the_classes_to_their_mode():
    rng = np.random.default_rng(6)
    truth = rng.integers(4, size=3000)
    log_p = cp.log_probabilities(classifier_probabilities(rng, 3000, 4, truth), np.arange(3000),
                                 np.arange(4))
    fit = cp.mode(log_p, truth)
    moved = truth.copy()
    flip = rng.random(truth.size) < 0.02  # more than a sweep moves
    moved[flip] = rng.integers(4, size=flip.sum())
    exact = cp.mode(log_p, moved)["y"]
    centre = cp.newton_centre(fit, cp.sufficient_statistics(log_p, moved))
    sd = np.sqrt(np.diag(np.linalg.inv(fit["precision"])))
    error, shift = np.abs(centre - exact) / sd, np.abs(fit["y"] - exact) / sd
    assert error.max() < 0.25 and error.max() < shift.max() / 10
    # the mode maximises the log-density along every coordinate
    basis = cp.zero_sum_basis(4)
    density = [cp.log_density(log_p, moved, np.r_[np.exp(y[0]), basis @ y[1:]], cp.BIAS_SCALE)
               + y[0]  # log tau's Jacobian
               for y in (exact, exact + 0.1 * sd[0] * np.eye(4)[0], exact - 0.1 * sd * np.eye(4)[2])]
    assert density[0] > max(density[1:])


def test_predictions_that_are_not_probabilities_are_refused():
    _, labels, p = simulate(np.random.default_rng(7), n_items=10)
    with pytest.raises(ValueError, match=r"expected shape \(10, 3\)"):
        ds.build(labels, predictions=p[:9])
    bad = p.copy()
    bad[4] *= 0.5
    with pytest.raises(ValueError, match=r"row 4 \(item 4\): the probabilities sum to 0.5"):
        ds.build(labels, predictions=bad)
    with pytest.raises(ValueError, match="joint class sweep"):
        ds.build_learned_prior(labels, predictions=p, sampler="collapsed")


@pytest.mark.slow  # 120 fits; NUTS above is the quick suite's independent check
def test_simulation_based_calibration_of_the_compiled_sampler():
    def simulated(rng):
        truth, labels, p = simulate(rng, n_items=30)
        return truth, (labels, p)

    result = simulation_based_calibration(lambda data: ds.build(data[0], predictions=data[1]),
                                          simulated,
                                          var_names=["temperature", "class_bias", "confusion"],
                                          n_simulations=120, draws=400, chains=2, thin=8,
                                          seed=12, log_likelihood=False)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)
