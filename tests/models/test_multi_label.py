"""The multi-label latent-class model (:mod:`plausible.models.multi_label`): its container's
readers and errors, each Gibbs conditional against its closed form, the summed-out
log-likelihood against enumeration over the true sets and components, the Gibbs posterior
against NUTS and against ``pm.sample`` with the kernel as its step, the predictive check, and
the multi-label metrics against hand computations."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytest
from scipy import stats

import plausible as pl
from plausible.data.label_set_simulation import simulate_label_sets
from plausible.data.label_sets import LabelSets
from plausible.metrics import multi_label as metrics
from plausible.models import multi_label

from posterior_agreement import assert_same_posterior

# --- the container -------------------------------------------------------------------------

LONG = pd.DataFrame({"task": ["a", "a", "b", "b", "c"], "worker": ["u", "u", "u", "v", "v"],
                     "label": ["x", "y", None, "y", "x"]})


def test_long_and_wide_forms_read_the_same_sets_and_round_trip():
    """Rows of a (task, worker) pair make one set, a missing label the empty set; the wide
    form, ``to_frame``/``to_wide`` and ``subset`` keep the sets, and equal data hash alike."""
    sets = LabelSets.from_frame(LONG)
    assert list(sets.classes) == ["x", "y"] and sets.n_responses == 4
    np.testing.assert_array_equal(sets.sets, [[1, 1], [0, 0], [0, 1], [1, 0]])
    wide = pd.DataFrame({"task": ["a", "b", "b", "c"], "worker": ["u", "u", "v", "v"],
                         "x": [1, 0, 0, True], "y": [1.0, 0, 1, 0]})
    assert LabelSets.from_wide(wide).content_hash == sets.content_hash
    assert LabelSets.from_frame(sets.to_frame()).content_hash == sets.content_hash
    assert LabelSets.from_wide(sets.to_wide()).content_hash == sets.content_hash
    part = sets.subset([2, 0])
    assert list(part.items) == ["c", "a"]
    np.testing.assert_array_equal(part.sets, [[1, 0], [1, 1]])
    declared = LabelSets.from_frame(LONG, classes=["y", "x", "z"])
    np.testing.assert_array_equal(declared.sets[0], [1, 1, 0])


def frame(task, worker, label):
    return pd.DataFrame({"task": task, "worker": worker, "label": label})


@pytest.mark.parametrize("read, message", [
    (lambda: LabelSets.from_frame(frame(["a", "a"], ["u", "u"], ["x", "x"])),
     "row 1: item 'a', annotator 'u': label 'x' given twice"),
    (lambda: LabelSets.from_frame(frame(["a", "a"], ["u", "u"], ["x", ""])),
     "row 1: item 'a', annotator 'u': an empty label set, but the same item"),
    (lambda: LabelSets.from_frame(frame(["a", "a"], ["u", "u"], [None, np.nan])),
     "row 1: item 'a', annotator 'u': the empty label set given twice"),
    (lambda: LabelSets.from_frame(frame(["a", None], ["u", "u"], ["x", "y"])),
     "row 1: missing 'task'"),
    (lambda: LabelSets.from_frame(frame(["a", "b"], ["u", np.nan], ["x", "y"])),
     "row 1: missing 'worker'"),
    (lambda: LabelSets.from_frame(LONG, allow_empty=False),
     "row 2: item 'b', annotator 'u': an empty label set"),
    (lambda: LabelSets.from_frame(LONG, classes=["x"]),
     "row 1: item 'a', annotator 'u': label 'y' is not one of the classes"),
    (lambda: LabelSets.from_wide(pd.DataFrame({"task": ["a", "b"], "worker": ["u", "u"],
                                               "x": [1, 2], "y": [0, 0]})),
     "row 1: item 'b', annotator 'u': label column 'x' holds 2, not 0 or 1"),
    (lambda: LabelSets.from_wide(pd.DataFrame({"task": ["a", "b"], "worker": ["u", "u"],
                                               "x": [1, np.nan]})),
     "row 1: item 'b', annotator 'u': label column 'x' holds nan"),
    (lambda: LabelSets.from_wide(pd.DataFrame({"task": ["a", "a"], "worker": ["u", "u"],
                                               "x": [1, 0]})),
     "row 1: item 'a', annotator 'u': a second row"),
    (lambda: LabelSets.from_wide(pd.DataFrame({"task": ["a", "b"], "worker": ["u", "u"],
                                               "x": [1, 0]}), allow_empty=False),
     "row 1: item 'b', annotator 'u': an empty label set"),
    (lambda: LabelSets([0, 0], [1, 1], [[1], [0]], ["a"], ["u", "v"], ["x"]),
     "item 'a', annotator 'v': a second response"),
    (lambda: LabelSets([0, 1], [0, 0], [[1], [0]], ["a", "b", "c"], ["u"], ["x"]),
     "item 'c' has no label sets"),
])
def test_errors_name_the_row_item_and_annotator(read, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        read()


# --- the model -----------------------------------------------------------------------------


def theta(rng, J, K, M):
    """Random parameters, as the kernel's logs and as values."""
    values = {"component_prior": rng.dirichlet(np.ones(M)),
              "label_rate": rng.uniform(0.05, 0.95, (M, K)),
              "sensitivity": rng.uniform(0.5, 0.95, (J, K)),
              "specificity": rng.uniform(0.6, 0.99, (J, K))}
    logs = [np.log(values["component_prior"])]
    for name in ("label_rate", "sensitivity", "specificity"):
        logs += [np.log(values[name]), np.log1p(-values[name])]
    return values, logs


def brute_force(data, values, gamma):
    """Per item, by enumeration over every true set ``y in {0,1}^K`` and component ``m``:
    ``log p(x_i)``, ``P(m_i = m | x_i)`` and ``P(y_ik = 1 | x_i)`` and ``P(y_ik = 1 | m,
    x_i)``, with each response's likelihood to the power ``gamma``."""
    pi, phi = values["component_prior"], values["label_rate"]
    se, sp = values["sensitivity"], values["specificity"]
    M, K = phi.shape
    out = []
    for i in range(data.n_items):
        joint = np.zeros((M, 2 ** K))
        ys = np.array(list(itertools.product([0, 1], repeat=K)))
        for m in range(M):
            for t, y in enumerate(ys):
                p = pi[m] * np.prod(np.where(y, phi[m], 1 - phi[m]))
                for r in np.flatnonzero(data.item == i):
                    j, x = data.annotator[r], data.sets[r]
                    p_x = np.where(y, np.where(x, se[j], 1 - se[j]),
                                   np.where(x, 1 - sp[j], sp[j]))
                    p *= np.prod(p_x) ** gamma
                joint[m, t] = p
        total = joint.sum()
        w = joint.sum(axis=1) / total
        q = (joint @ ys) / joint.sum(axis=1)[:, None]
        out.append((np.log(total), w, (joint.sum(axis=0) @ ys) / total, q))
    return out


@pytest.fixture(scope="module")
def tiny():
    return simulate_label_sets(n_items=6, n_annotators=3, per_item=2,
                               label_rates=[[0.9, 0.8, 0.1], [0.1, 0.2, 0.9]], seed=3).data


def test_latent_conditionals_and_log_likelihood_by_enumeration(tiny):
    """``P(m_i | theta, x)`` (true sets summed out), ``P(y_ik | m_i, theta, x)``, the per-item
    log-likelihood and the plausibility, against enumeration over ``y`` and ``m``; the
    trace's ``log_likelihood`` group too, at reliability 1.5."""
    gamma = 1.5
    model = multi_label.build(tiny, reliability=gamma, components=2)
    kernel = pl.inference.steps(model)[0].kernel
    rng = np.random.default_rng(0)
    values, logs = theta(rng, tiny.n_annotators, tiny.n_classes, 2)
    w, q = kernel.posteriors(*logs)
    expected = brute_force(tiny, values, gamma)
    np.testing.assert_allclose(w, [e[1] for e in expected], rtol=1e-10)
    np.testing.assert_allclose(q, [e[3] for e in expected], rtol=1e-10)
    np.testing.assert_allclose(np.einsum("im,imk->ik", w, q), [e[2] for e in expected],
                               rtol=1e-10)
    trace = pl.sample(model, draws=3, chains=1, seed=0, check_convergence=False)
    posterior = trace.posterior
    for draw in (0, 2):
        at = {name: posterior[name].values[0, draw] for name in values}
        expected = brute_force(tiny, at, gamma)
        np.testing.assert_allclose(trace.log_likelihood["label_sets"].values[0, draw],
                                   [e[0] for e in expected], rtol=1e-9)
        np.testing.assert_allclose(posterior["plausibility"].values[0, draw],
                                   [e[2] for e in expected], rtol=1e-5)
        np.testing.assert_allclose(posterior["label_prevalence"].values[0, draw],
                                   at["component_prior"] @ at["label_rate"], rtol=1e-12)
    # the PyMC graph's density and plausibility at one point: the same formulas
    point = {"component_prior_simplex__": model.rvs_to_transforms[model["component_prior"]]
             .forward(values["component_prior"]).eval()}
    for name in ("label_rate", "sensitivity", "specificity"):
        point[f"{name}_logodds__"] = np.log(values[name]) - np.log1p(-values[name])
    outputs = model.replace_rvs_by_values([model["label_sets"], model["plausibility"]])
    potential, plausibility = model.compile_fn(outputs, inputs=model.value_vars,
                                               on_unused_input="ignore",
                                               mode="FAST_COMPILE")(point)
    expected = brute_force(tiny, values, gamma)
    np.testing.assert_allclose(potential, sum(e[0] for e in expected), rtol=1e-10)
    np.testing.assert_allclose(plausibility, [e[2] for e in expected], rtol=1e-10)


def test_parameter_draws_follow_their_conjugate_conditionals():
    """From fixed ``(m, y)``, 4000 draws of ``theta | m, y`` match ``Dirichlet(alpha + n)``,
    ``Beta(a + s, b + n - s)`` and the annotators' tempered Beta conditionals (means within
    4.5 standard errors, spreads within 8 %)."""
    sim = simulate_label_sets(n_items=40, n_annotators=3, per_item=2, seed=1)
    data, gamma, M = sim.data, 2.0, 3
    model = multi_label.build(data, reliability=gamma, components=M,
                              component_concentration=0.7)
    kernel = pl.inference.steps(model)[0].kernel
    m, y = sim.component, sim.truth
    rng = np.random.default_rng(0)
    draws = [np.concatenate([np.exp(v).ravel() for v in kernel.draw_parameters(rng, m, y)])
             for _ in range(4000)]
    draws = np.array(draws)
    K, J = data.n_classes, data.n_annotators
    n = np.bincount(m, minlength=M)
    s = np.array([[y[m == c, k].sum() for k in range(K)] for c in range(M)])
    yr, x = y[data.item], data.sets
    count = lambda mask: np.array([[mask[data.annotator == j, k].sum() for k in range(K)]
                                   for j in range(J)])
    tp, fn = count(yr & x), count(yr & ~x)
    tn, fp = count(~yr & ~x), count(~yr & x)
    a = 0.7 + n
    pi_mean, pi_var = a / a.sum(), a * (a.sum() - a) / (a.sum() ** 2 * (a.sum() + 1))
    betas = [(1 + s, 1 + n[:, None] - s), (2 + gamma * tp, 1 + gamma * fn),
             (4 + gamma * tn, 1 + gamma * fp)]
    means, variances = [pi_mean], [pi_var]
    for alpha, beta in betas:  # each Beta's p and 1 - p, as the draws are laid out
        dist = stats.beta(alpha, beta)
        means += [dist.mean().ravel(), 1 - dist.mean().ravel()]
        variances += [dist.var().ravel()] * 2
    mean, var = np.concatenate(means), np.concatenate(variances)
    assert np.all(np.abs(draws.mean(0) - mean) < 4.5 * np.sqrt(var / draws.shape[0]))
    np.testing.assert_allclose(draws.std(0), np.sqrt(var), rtol=0.08)


@pytest.fixture(scope="module")
def small():
    return simulate_label_sets(n_items=16, n_annotators=3, per_item=3,
                               label_rates=[[0.9, 0.1], [0.1, 0.85]], seed=5).data


@pytest.fixture(scope="module")
def gibbs_trace(small):
    model = multi_label.build(small, components=2, component_concentration=1.0)
    return pl.sample(model, draws=1000, chains=4, seed=1, log_likelihood=False)


INVARIANT = ("plausibility", "sensitivity", "specificity", "label_prevalence")


def test_gibbs_matches_nuts_with_labels_and_components_summed_out(small, gibbs_trace):
    """Exact Gibbs against NUTS on the summed-out graph: the component-invariant quantities
    within 4.5 MCSE, and the weights sorted as the Gibbs trace records them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(multi_label.build(small, components=2, component_concentration=1.0,
                                           gibbs=False),
                         draws=400, tune=400, chains=4, seed=2, progressbar=False,
                         log_likelihood=False, target_accept=0.9)
    assert_same_posterior(gibbs_trace, nuts, INVARIANT)
    weights = nuts.posterior["component_prior"]
    nuts.posterior["component_prior"] = weights.copy(data=-np.sort(-weights.values, axis=-1))
    assert_same_posterior(gibbs_trace, nuts, ["component_prior"])


def test_pm_sample_with_the_kernel_step_and_same_seed_same_draws(small, gibbs_trace):
    model = multi_label.build(small, components=2, component_concentration=1.0)
    again = pl.sample(model, draws=1000, chains=4, seed=1, log_likelihood=False)
    np.testing.assert_array_equal(again.posterior["plausibility"].values,
                                  gibbs_trace.posterior["plausibility"].values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pymc = pm.sample(model=model, step=pl.inference.steps(model), draws=600, tune=100,
                         chains=2, cores=1, random_seed=3, progressbar=False,
                         compute_convergence_checks=False)
    assert_same_posterior(gibbs_trace, pymc, INVARIANT)


def test_replicates_flag_a_model_without_label_dependence():
    """On labels that come in two patterns, one component (labels independent) misses the
    pairs' co-occurrence (mid p-value at the edge); the mixture reproduces it."""
    sim = simulate_label_sets(n_items=150, n_annotators=6, per_item=3,
                              label_rates=[[0.95, 0.9, 0.05], [0.05, 0.05, 0.9]], seed=7)
    p = {}
    for M in (1, 3):
        trace = pl.sample(multi_label.build(sim.data, components=M), draws=150, chains=1,
                          seed=0, check_convergence=False, log_likelihood=False)
        replicated = multi_label.replicate_label_sets(trace, sim.data, draws=150, seed=1)
        assert replicated.shape == (150, sim.data.n_responses, 3)
        check = multi_label.label_set_predictive_check(sim.data, replicated)
        p[M] = check.loc["co_occurrence", "p_value"]
    assert p[1].max() > 0.99 or p[1].min() < 0.01
    assert p[3].between(0.01, 0.99).all()


def test_true_set_draws_match_the_plausibilities_and_labels_are_oriented(small, gibbs_trace):
    """Draws of the true sets average to the posterior-mean plausibilities; every draw reads
    each label with annotators better than chance."""
    sets = multi_label.draw_label_sets(gibbs_trace, small, draws=2000, seed=0)
    assert sets.shape == (2000, small.n_items, small.n_classes)
    mean = gibbs_trace.posterior["plausibility"].mean(("chain", "draw")).values
    np.testing.assert_allclose(sets.mean(0), mean, atol=4.5 * np.sqrt(0.25 / 2000))
    assert (multi_label.label_flip_check(gibbs_trace) == 1).all()


# --- the metrics ---------------------------------------------------------------------------

P = np.array([[[0.9, 0.2], [0.6, 0.6]],
              [[0.7, 0.4], [0.1, 0.8]]])  # (sample, item, class)


def test_metrics_by_hand():
    np.testing.assert_allclose(metrics.label_certainty(P), [[0.8, 0.7], [0.75, 0.7]])
    # posterior means [[0.8, 0.3], [0.35, 0.7]]: draws on the majority side
    assert metrics.label_certainty(P, how="agreement").tolist() == [[1, 1], [0.5, 1]]
    predicted = np.array([[1, 1], [0, 1]])
    # item 0: (0.8 + 0.3) / 2; item 1: (0.65 + 0.7) / 2
    np.testing.assert_allclose(metrics.expected_hamming_accuracy(P, predicted), [0.55, 0.675])
    truth = np.array([[[1, 0], [0, 1]], [[1, 1], [0, 0]], [[0, 0], [1, 1]]], dtype=bool)
    # item 0 against {0, 1}: F1 2/3, 1, 0; item 1 against {1}: 1, 0 (both sets differ), 2/3
    np.testing.assert_allclose(metrics.expected_f1(truth, predicted),
                               [(2 / 3 + 1 + 0) / 3, (1 + 0 + 2 / 3) / 3])
    # micro per draw: TP 2, 2, 1; predicted 3; true 2, 2, 2 -> 4/5, 4/5, 2/5
    assert metrics.expected_f1(truth, predicted, average="micro") == pytest.approx(2 / 3)
    np.testing.assert_allclose(metrics.expected_f1(truth, predicted, average="macro"),
                               [(1 + 1 + 0) / 3, (2 / 3 + 2 / 3 + 2 / 3) / 3])
    np.testing.assert_allclose(metrics.expected_subset_accuracy(truth, predicted),
                               [1 / 3, 1 / 3])
    draws = metrics.sets_from_marginals(P, samples=4000, seed=0)
    np.testing.assert_allclose(draws.mean(0), P.mean(0), atol=0.03)
    with pytest.raises(ValueError, match="0/1"):
        metrics.expected_hamming_accuracy(P, predicted * 2)


def test_simulation_based_calibration():
    """Ranks of the true label prevalences and annotators' sensitivities and specificities
    among the posterior draws are uniform over 20 data sets drawn from the model's prior
    (Talts et al. 2018); the component-wise quantities are left out, their order being the
    sampler's (components sorted by weight)."""
    from plausible.inference.sbc import simulation_based_calibration

    M, K, J, I = 2, 2, 3, 25

    def simulate(rng):
        pi = rng.dirichlet(np.full(M, 0.5))
        phi = rng.beta(1.0, 1.0, (M, K))
        se, sp = rng.beta(2.0, 1.0, (J, K)), rng.beta(4.0, 1.0, (J, K))
        y = rng.random((I, K)) < phi[rng.choice(M, I, p=pi)]
        item, annotator = np.repeat(np.arange(I), J), np.tile(np.arange(J), I)
        p = np.where(y[item], se[annotator], 1 - sp[annotator])
        data = LabelSets(item, annotator, rng.random(p.shape) < p, np.arange(I),
                         np.arange(J), np.arange(K))
        return {"label_prevalence": pi @ phi, "sensitivity": se, "specificity": sp}, data

    result = simulation_based_calibration(
        lambda data: multi_label.build(data, components=M), simulate,
        var_names=["label_prevalence", "sensitivity", "specificity"], n_simulations=20,
        draws=100, chains=2, thin=2, tune=50, seed=5, log_likelihood=False)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)


def test_each_item_s_pattern_is_its_posterior_over_the_components():
    """component_membership: rows are distributions; on a crowd whose sets come from two
    well-separated patterns of equal weight (whose order by weight switches from draw to
    draw), the items of one true pattern share their most probable component, and the front
    door's table carries it with its probability."""
    sim = simulate_label_sets(n_items=80, n_annotators=8, per_item=4,
                              label_rates=[[0.95, 0.9, 0.05, 0.05], [0.05, 0.05, 0.95, 0.9]],
                              weights=[0.5, 0.5], seed=4)
    result = pl.aggregate(sim.data, "multi-label", components=2, draws=300, chains=2, seed=1)
    membership = multi_label.component_membership(result.trace, sim.data)  # as the table
    np.testing.assert_allclose(membership.sum("component"), 1.0)
    best = membership.values.argmax(axis=1)
    for pattern in range(2):
        mine = best[sim.component == pattern]
        assert (mine == np.bincount(mine).argmax()).mean() > 0.9, pattern
    assert len(set(best)) == 2  # two patterns, two components
    table = result.labels()
    assert (table.loc[sim.data.items, "pattern"].to_numpy() == best).all()
    assert table["pattern_probability"].between(1 / 2, 1).all()
