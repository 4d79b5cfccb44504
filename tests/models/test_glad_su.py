"""Item-difficulty models (GLAD, Su): likelihood and plausibility against brute force, the
Gibbs step for (z, pi) against enumeration and the closed-form Dirichlet, known-parameter
mode, label switching, bad input."""

import itertools

import numpy as np
import pandas as pd
import pytensor
import pytensor.tensor as pt
import pytest
import xarray as xr
from scipy import stats
from scipy.special import expit, logsumexp, softmax

from plausible.data.glad_simulation import simulate_glad
from plausible.data.labels import Labels
from plausible.inference.declarations import declared_gibbs
from plausible.inference.step_methods.latent_class_gibbs import ClassGibbs
from plausible.data.label_groups import LabelGroups
from plausible.models import glad, su_difficulty
from plausible.models.latent_class import class_log_likelihood_graph, majority_vote, posterior_labels
from plausible.maths.fallibility import error_rate


def _labels(item, annotator, label, n_items, n_annotators, n_classes):
    frame = pd.DataFrame({"item": item, "annotator": annotator, "label": label})
    return Labels.from_frame(frame, classes=list(range(n_classes)), items=np.arange(n_items),
                             annotators=np.arange(n_annotators))


@pytest.fixture(scope="module")
def small3():
    return simulate_glad(12, 4, 3, coverage=0.6, seed=3).labels


def _point(model, rng):
    """The initial point with every continuous value jittered (value space)."""
    point = {}
    for name, value in model.initial_point().items():
        jitter = 0 if np.issubdtype(np.asarray(value).dtype, np.integer) else rng.uniform(-1, 1, np.shape(value))
        point[name] = value + jitter
    return point


def _evaluate(model, point, names):
    outs = model.replace_rvs_by_values([model[n] for n in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    return dict(zip(names, fn(point)))


def _brute_L(labels, r):
    """L[i, c] by a plain loop over annotations, given r_k (probability label k is correct)."""
    C = labels.n_classes
    L = np.zeros((labels.n_items, C))
    for k, (i, x) in enumerate(zip(labels.item, labels.label)):
        for c in range(C):
            L[i, c] += np.log(r[k] if x == c else (1 - r[k]) / (C - 1))
    return L


def _correct_probability(model_name, values, labels):
    if model_name == "glad":
        return expit(values["ability"][labels.annotator] * np.exp(values["log_inverse_difficulty"][labels.item]))
    eps = error_rate(values["difficulty"][labels.item], values["fallibility"][labels.annotator],
                                   labels.n_classes)
    return 1 - eps


MODELS = {"glad": (glad, ["ability", "log_inverse_difficulty"]),
          "su": (su_difficulty, ["difficulty", "fallibility"])}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("gibbs", [True, False])
@pytest.mark.parametrize("reliability", [1.0, 2.5])
def test_likelihood_and_plausibility_against_brute_force(small3, name, gibbs, reliability):
    """The model's likelihood term, plausibility and (Gibbs build) class conditional equal
    the brute-force ones, the labels' log-likelihood multiplied by the reliability."""
    module, params = MODELS[name]
    model = module.build(small3, gibbs=gibbs, reliability=reliability)
    point = _point(model, np.random.default_rng(1))
    names = [*params, "class_prior", "plausibility", "labels"]
    values = _evaluate(model, point, names)
    L = reliability * _brute_L(small3, _correct_probability(name, values, small3))
    log_joint = np.log(values["class_prior"]) + L
    np.testing.assert_allclose(values["plausibility"], softmax(log_joint, axis=1), rtol=1e-9)
    if gibbs:  # likelihood given the true classes (majority vote at the initial point)
        z = point["true_class"]
        np.testing.assert_array_equal(z, majority_vote(small3))
        expected = L[np.arange(small3.n_items), z].sum()
        np.testing.assert_allclose(_step(model, 0).class_probabilities(point),
                                   softmax(log_joint, axis=1), rtol=1e-9)
    else:
        expected = logsumexp(log_joint, axis=1).sum()
    np.testing.assert_allclose(values["labels"], expected, rtol=1e-9)


def test_class_log_likelihoods_handle_perfect_labels():
    labels = _labels([0, 0, 1], [0, 1, 0], [1, 1, 0], 2, 2, 3)
    L = class_log_likelihood_graph(labels, np.zeros(3), np.full(3, -np.inf)).eval()
    assert np.isneginf(L[0, [0, 2]]).all() and L[0, 1] == 0 and L[1, 0] == 0
    assert not np.isnan(L).any()


def _step(model, seed, step=ClassGibbs):
    [declaration] = [d for d in declared_gibbs(model) if d.step is step]
    step = declaration.instantiate(model)
    step.rng = np.random.default_rng(seed)
    return step


@pytest.mark.parametrize("name", MODELS)
def test_class_draws_match_enumeration(name):
    """Joint draws of z over 4 items (3 classes, 81 configurations) match the enumerated
    conditional p(z | pi, theta, x) ∝ prod_i pi_{z_i} prod_k p(x_k | z)."""
    labels = simulate_glad(4, 3, 3, seed=11).labels
    module, params = MODELS[name]
    model = module.build(labels)
    step = _step(model, 12)
    point = _point(model, np.random.default_rng(13))
    values = _evaluate(model, point, [*params, "class_prior"])
    r = _correct_probability(name, values, labels)
    configs = np.array(list(itertools.product(range(3), repeat=labels.n_items)))
    log_joint = np.zeros(len(configs))
    for n, z in enumerate(configs):
        log_joint[n] = np.log(values["class_prior"][z]).sum()
        for k, (i, x) in enumerate(zip(labels.item, labels.label)):
            log_joint[n] += np.log(r[k] if x == z[i] else (1 - r[k]) / 2)
    probs = softmax(log_joint)
    n_draws = 20000
    draws = np.array([step.step(point)[0]["true_class"] for _ in range(n_draws)])
    codes = draws @ 3 ** np.arange(labels.n_items)[::-1]
    observed = np.bincount(codes, minlength=len(configs))
    keep = probs * n_draws > 5
    expected = probs[keep] * n_draws
    pooled_obs = np.append(observed[keep], observed[~keep].sum())
    pooled_exp = np.append(expected, probs[~keep].sum() * n_draws)
    assert stats.chisquare(pooled_obs, pooled_exp).pvalue > 1e-3
    np.testing.assert_allclose(step.class_probabilities(point),
                               [[probs[configs[:, i] == c].sum() for c in range(3)]
                                for i in range(labels.n_items)], rtol=1e-9)


def test_class_prior_draw_is_closed_form_dirichlet(small3):
    """Given z, pi ~ Dirichlet(1 + counts(z)); its marginals are Beta (KS test), read back
    through PyMC's simplex transform."""
    model = glad.build(small3, class_concentration=0.5)
    step = _step(model, 5)
    z = np.random.default_rng(6).integers(0, 3, small3.n_items)
    counts = np.bincount(z, minlength=3)
    to_pi = model.compile_fn(model.replace_rvs_by_values([model["class_prior"]])[0],
                             inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    point = model.initial_point()
    draws = []
    for _ in range(3000):
        point["class_prior_simplex__"] = step.draw_prior(z)
        draws.append(to_pi(point))
    draws = np.array(draws)
    a = 0.5 + counts
    for c in range(3):
        assert stats.kstest(draws[:, c], stats.beta(a[c], a.sum() - a[c]).cdf).pvalue > 1e-3


def test_known_parameter_posterior_against_brute_force(small3):
    rng = np.random.default_rng(8)
    delta, phi = rng.uniform(0, 0.8, small3.n_items), rng.uniform(0, 0.5, small3.n_annotators)
    pi = np.array([0.5, 0.3, 0.2])
    got = su_difficulty.known_class_posterior(small3, delta, phi, pi)
    r = 1 - error_rate(delta[small3.item], phi[small3.annotator], 3)
    np.testing.assert_allclose(got, softmax(np.log(pi) + _brute_L(small3, r), axis=1), rtol=1e-10)
    # perfect labelers on easy items: the label is the class, no nan
    agreeing = _labels([0, 0, 1], [0, 1, 1], [2, 2, 0], 2, 2, 3)
    perfect = su_difficulty.known_class_posterior(agreeing, 0.0, 0.0, pi)
    np.testing.assert_allclose(perfect, [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="impossible under the known parameters"):
        su_difficulty.known_class_posterior(small3, 0.0, 0.0, pi)  # small3 has disagreements
    with pytest.raises(ValueError, match=r"fallibility\[0\] = 1.5 is outside \[0, 1\]"):
        su_difficulty.known_class_posterior(small3, 0.1, 1.5, pi)


def test_error_rate_limits():
    assert error_rate(0.0, 0.0, 4) == 0
    np.testing.assert_allclose(error_rate(1.0, 0.3, 4), 0.75)  # uniform labels
    np.testing.assert_allclose(error_rate(0.2, 0.5, 2), 0.5 * (1 - 0.8 * 0.5))


def test_label_switching_check_flags_mirror_mode():
    ability = xr.DataArray(np.random.default_rng(0).normal(1, 0.3, (2, 10, 5)),
                           dims=("chain", "draw", "annotator"))
    posterior = xr.Dataset({"ability": ability})
    np.testing.assert_array_equal(glad.label_switching_check(posterior).values, [0, 0])
    mirrored = posterior.assign(ability=-ability)
    np.testing.assert_array_equal(glad.label_switching_check(mirrored).values, [1, 1])


def test_posterior_labels_are_class_ids():
    plaus = xr.DataArray(np.array([[[[0.2, 0.8], [0.9, 0.1]]]]), dims=("chain", "draw", "item", "class"),
                         coords={"item": ["a", "b"], "class": ["no", "yes"]})
    out = posterior_labels(xr.Dataset({"plausibility": plaus}))
    assert list(out.values) == ["yes", "no"] and list(out["item"].values) == ["a", "b"]


def _frame(rows):
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


@pytest.mark.parametrize("module", [glad, su_difficulty])
def test_bad_input_errors(module):
    good = [("a", "x", 0), ("a", "y", 1), ("b", "x", 1)]
    with pytest.raises(ValueError, match="label 2 is not one of the classes"):
        module.build(Labels.from_frame(_frame(good + [("b", "y", 2)]), classes=[0, 1]))
    with pytest.raises(ValueError, match="unknown annotator 'z'"):
        module.build(Labels.from_frame(_frame(good + [("b", "z", 1)]), classes=[0, 1], annotators=["x", "y"]))
    with pytest.raises(ValueError, match="item 'c' has no labels"):
        module.build(Labels.from_frame(_frame(good), classes=[0, 1], items=["a", "b", "c"]))
    with pytest.raises(ValueError, match=">= 2 classes"):
        module.build(Labels.from_frame(_frame([("a", "x", 0)])))
    with pytest.raises(TypeError, match="Labels"):
        module.build(good)  # a DataFrame is read (test_registry); a list is not
    with pytest.raises(ValueError, match="class_concentration"):
        module.build(Labels.from_frame(_frame(good)), class_concentration=0.0)
    # an annotator without labels is allowed: its parameter keeps its prior
    module.build(Labels.from_frame(_frame(good), classes=[0, 1], annotators=["x", "y", "w"]))


def test_bad_priors():
    labels = Labels.from_frame(_frame([("a", "x", 0), ("b", "y", 1)]))
    with pytest.raises(ValueError, match="ability_prior"):
        glad.build(labels, ability_prior=(1.0, 0.0))
    with pytest.raises(ValueError, match="difficulty_prior"):
        su_difficulty.build(labels, difficulty_prior=(0.0, 1.0))


def test_fused_glad_class_posterior_matches_graph(small3):
    """The numba Op's class posterior (item, class) equals softmax(log pi + L) with L the
    pytensor graph of the same likelihood, also where |alpha beta| is large (the stable
    branches of the graph's softplus)."""
    rng = np.random.default_rng(9)
    a, b, log_pi, gamma = pt.dvector("a"), pt.dvector("b"), pt.dvector("log_pi"), pt.dscalar("g")
    score = a[small3.annotator] * pt.exp(b)[small3.item]
    L = class_log_likelihood_graph(small3, -pt.softplus(-score), -pt.softplus(score))
    fused = glad._class_posterior(small3, log_pi, gamma, a, b)
    f = pytensor.function([log_pi, gamma, a, b], [L, fused])
    for scale, g in ((1.0, 1.0), (30.0, 1.0), (400.0, 1.0), (1.0, 0.3), (30.0, 2.5)):
        av, bv = rng.normal(0, scale, small3.n_annotators), rng.normal(0, 1, small3.n_items)
        prior = np.log(rng.dirichlet(np.ones(3)))
        expected, got = f(prior, g, av, bv)
        np.testing.assert_allclose(got, softmax(prior + g * expected, axis=1), rtol=1e-9,
                                   atol=1e-14)
        # the evidence is the class log-likelihood up to a constant per item
        shift = glad.class_evidence(av, bv, *_by_item(small3)) - expected
        np.testing.assert_allclose(shift - shift[:, :1], 0.0, atol=1e-9 * max(1.0, np.abs(expected).max()))


def _by_item(labels):
    g = LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)
    return g.offsets, g.partner, g.label, labels.n_classes


def test_simulate_glad_is_seeded_and_follows_the_model():
    a, b = simulate_glad(3000, 6, 3, coverage=0.5, seed=5), simulate_glad(3000, 6, 3, coverage=0.5, seed=5)
    np.testing.assert_array_equal(a.labels.label, b.labels.label)
    assert np.bincount(a.labels.item, minlength=3000).min() >= 1  # no item without labels
    lab = a.labels
    r = expit(a.ability[lab.annotator] * np.exp(a.log_inverse_difficulty[lab.item]))
    correct = lab.label == a.truth[lab.item]
    # agreement with the truth matches the model's probability (binomial z-score)
    z = (correct.sum() - r.sum()) / np.sqrt((r * (1 - r)).sum())
    assert abs(z) < 4, z
    with pytest.raises(ValueError, match="coverage"):
        simulate_glad(10, 2, coverage=0.0)
    with pytest.raises(ValueError, match="prior"):
        simulate_glad(10, 2, 3, prior=[0.5, 0.5])


def test_dispersed_starts_keep_true_classes_in_support(small3):
    """Chain starts jitter the continuous parameters only; the integer classes stay valid."""
    from plausible.inference.sampling import dispersed_initvals

    model = glad.build(small3, plausibility=False)
    starts = dispersed_initvals(model, 4, np.random.default_rng(0), scale=2.0)
    for start in starts:
        z = np.asarray(start["true_class"])
        assert np.issubdtype(z.dtype, np.integer) and z.min() >= 0 and z.max() < small3.n_classes
    assert len({s["ability"].tobytes() for s in starts}) == 4


def test_pytensor_numba_cache_key_follows_the_kernel_code(monkeypatch):
    """PyTensor keys its on-disk numba cache by the Op's class and props only; the version
    the Op's funcify returns must change with the code it runs (here: its module's name, as
    when a module is renamed), or a stale compiled kernel is loaded in its place."""
    _, version = glad._numba_class_posterior(glad.ClassPosterior(), None)
    assert version == glad._kernel_version()
    monkeypatch.setattr(glad.class_evidence.py_func, "__module__", "plausible.renamed")
    assert glad._kernel_version() != version
