"""Bayesian Dawid–Skene: the members' conjugate annotator draws against their closed form, the class
posterior and the per-item log-likelihood against enumeration, Gibbs against NUTS with the
classes summed out, replicated labels, the label-switching check, the front door."""

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.special import logsumexp, softmax

import plausible as pl
from plausible.models.dawid_skene import members
from plausible.models import dawid_skene as ds

from posterior_agreement import assert_same_posterior


def small_labels(seed=0, n_items=12, n_annotators=3, n_classes=3):
    return pl.data.simulate_glad(n_items, n_annotators, n_classes=n_classes, coverage=0.8,
                                 seed=seed).labels


def gibbs_and_nuts(build, labels, nuts_options=None, **options):
    """Traces of ``build(labels, **options)`` by its Gibbs build (4 x 2000 draws) and by NUTS
    with the classes summed out (``gibbs=False``, 4 x 1000 draws, starts dispersed by 0.3,
    ``nuts_options`` passed to the sampler)."""
    gibbs = pl.sample(build(labels, **options), draws=2000, seed=0, progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(build(labels, gibbs=False, **options), draws=1000, seed=1,
                         progressbar=False, dispersion=0.3, **(nuts_options or {}))
    return gibbs, nuts


def enumerated_log_likelihood(labels, pi, gamma, p_label):
    """Per item, ``log sum_c pi_c prod_k p(x_k | c)^gamma`` by a plain loop over the item's
    labels, ``p_label(j, x)`` giving ``p(x | c)`` for every ``c``, ``(class,)``."""
    out = []
    for i in range(labels.n_items):
        terms = np.log(pi).copy()
        for k in np.flatnonzero(labels.item == i):
            terms += gamma * np.log(p_label(labels.annotator[k], labels.label[k]))
        out.append(logsumexp(terms))
    return np.array(out)


def member_draws(member, labels, z, gamma, n_draws=4000, seed=0):
    """``n_draws`` draws of a Dawid–Skene member's annotator half-sweep given the classes
    ``z`` (the kernel's counts built from them), each as the member's stored values."""
    C, J = labels.n_classes, labels.n_annotators
    counts = np.zeros((1, J * C, C), dtype=np.int64)
    np.add.at(counts[0], (labels.annotator * C + labels.label, z[labels.item]), 1)
    table, rng, state = np.empty((J * C, C)), np.random.default_rng(seed), member.start(J, C)
    draws = []
    for _ in range(n_draws):
        state = member.draw(rng, counts, gamma, table, state)
        draws.append({name: np.copy(v) for name, v in member.values(table, state).items()})
    return counts, {name: np.stack([d[name] for d in draws]) for name in draws[0]}


def test_confusion_rows_draw_the_dirichlet_conditional():
    labels = small_labels(seed=1)
    gamma = 1.7
    prior = ds.confusion_concentration(3, (4.0, 1.0))
    z = np.random.default_rng(2).integers(3, size=labels.n_items)
    counts, draws = member_draws(members.FullConfusion(prior), labels, z, gamma)
    n = np.zeros((labels.n_annotators, 3, 3))
    for k in range(labels.n_annotations):  # brute-force counts
        n[labels.annotator[k], z[labels.item[k]], labels.label[k]] += 1
    np.testing.assert_array_equal(members.summed_counts(counts), n)
    concentration = prior + gamma * n
    total = concentration.sum(axis=-1, keepdims=True)
    mean = concentration / total
    var = mean * (1 - mean) / (total + 1)
    theta = draws["confusion"]
    z_mean = (theta.mean(axis=0) - mean) / np.sqrt(var / len(theta))
    assert np.abs(z_mean).max() < 4.5
    np.testing.assert_allclose(theta.var(axis=0), var, rtol=0.15)


def test_class_posterior_matches_enumeration():
    labels = small_labels(seed=3)
    gamma = 0.6
    model = ds.build(labels, reliability=gamma)
    point = model.initial_point()
    rng = np.random.default_rng(4)
    pi = rng.dirichlet(np.ones(3))
    theta = rng.dirichlet(np.ones(3), size=(labels.n_annotators, 3))
    point["class_prior_simplex__"] = np.log(pi[:-1]) - np.log(pi).mean()
    point["confusion_simplex__"] = np.log(theta[..., :-1]) - np.log(theta).mean(-1, keepdims=True)
    [out] = model.replace_rvs_by_values([model["plausibility"]])
    plausibility = model.compile_fn(out, inputs=model.value_vars, on_unused_input="ignore",
                                    point_fn=True)(point)
    for i in range(labels.n_items):
        log_p = np.log(pi).copy()
        for k in np.flatnonzero(labels.item == i):
            log_p += gamma * np.log(theta[labels.annotator[k], :, labels.label[k]])
        np.testing.assert_allclose(plausibility[i], softmax(log_p), rtol=1e-10)


def test_log_likelihood_matches_enumeration_and_loo_runs():
    labels = small_labels(seed=5)
    gamma = 1.3
    trace = pl.sample(ds.build(labels, reliability=gamma), draws=30, chains=2, seed=0,
                      progressbar=False)
    ll = trace["log_likelihood"]["labels"]
    assert ll.dims == ("chain", "draw", "item")
    pi = trace.posterior["class_prior"].values
    theta = trace.posterior["confusion"].values
    for c, d in [(0, 0), (1, 29)]:
        expected = enumerated_log_likelihood(labels, pi[c, d], gamma,
                                             lambda j, x: theta[c, d, j, :, x])
        np.testing.assert_allclose(ll.values[c, d], expected, rtol=1e-10)
    assert trace["observed_data"]["labels"].sizes["annotation"] == labels.n_annotations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        az.loo(trace)


@pytest.mark.slow
def test_gibbs_matches_nuts_with_classes_summed_out():
    labels = pl.data.simulate_glad(40, 4, n_classes=2, seed=3).labels
    gibbs, nuts = gibbs_and_nuts(ds.build, labels)
    assert (ds.label_switching_check(nuts) == 0).all()
    assert pl.diagnostics.convergence_report(nuts).converged
    assert_same_posterior(gibbs, nuts, ("plausibility", "confusion", "class_prior"))


def test_replicated_labels_keep_the_design_and_cover_the_rates():
    sim = pl.data.simulate_glad(150, 5, n_classes=3, seed=6)
    labels = sim.labels
    trace = pl.sample(ds.build(labels), draws=300, seed=0, progressbar=False)
    for classes in ("new", "posterior"):
        replicated = ds.replicate_labels(trace, labels, draws=200, seed=1, classes=classes)
        assert replicated.shape == (200, labels.n_annotations)
        assert replicated.min() >= 0 and replicated.max() < 3
    check = pl.diagnostics.annotation_predictive_check(
        labels, ds.replicate_labels(trace, labels, draws=400, seed=2))
    rates = check.p_values("annotator_rate")
    assert ((rates > 0.005) & (rates < 0.995)).all()


def test_label_switching_check_flags_a_relabelled_trace():
    rng = np.random.default_rng(7)
    good = rng.dirichlet([8.0, 1.0], size=(2, 50, 3))      # rows of class 0: mostly right
    theta = np.stack([good, good[..., ::-1]], axis=-2)     # (chain, draw, annotator, 2, 2)
    dims = ("chain", "draw", "annotator", "class", "label_class")
    trace = xr.DataTree.from_dict({"posterior": xr.Dataset({"confusion": (dims, theta)})})
    assert (ds.label_switching_check(trace) == 0).all()
    swapped = xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"confusion": (dims, theta[..., ::-1, :])})})
    assert (ds.label_switching_check(swapped) == 1).all()


def test_front_door_and_cli_with_string_ids(tmp_path, capsys):
    sim = pl.data.simulate_glad(60, 5, n_classes=3, seed=8)
    table = sim.labels.to_frame()
    table = pd.DataFrame({"task": "t" + table["item"].astype(str),
                          "worker": "w" + table["annotator"].astype(str),
                          "label": np.array(["red", "green", "blue"])[table["label"]]})
    table.to_csv(tmp_path / "answers.csv", index=False)
    from plausible.cli import main

    out = tmp_path / "out.csv"
    assert main(["aggregate", str(tmp_path / "answers.csv"), "--model", "dawid-skene", "-o",
                 str(out), "--draws", "100", "--chains", "2", "--no-progress"]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns[:4]) == ["item", "top_class", "probability_top_class",
                                       "certainty_top1"]
    assert set(frame.columns[4:]) == {"plausibility_blue", "plausibility_green",
                                      "plausibility_red"}
    expected = pl.aggregate(table, "dawid-skene", draws=100, chains=2, seed=0).to_frame()
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert "dawid-skene" in pl.models.available("labels").index
    assert isinstance(pl.aggregate(table, "dawid-skene", draws=20, chains=2, seed=0).check(
        draws=20).predictive, pl.diagnostics.AnnotationPredictiveCheck)


def test_one_coin_accuracies_draw_the_beta_conditional():
    labels = small_labels(seed=9)
    gamma = 0.8
    z = np.random.default_rng(3).integers(3, size=labels.n_items)
    _, draws = member_draws(members.OneCoin((4.0, 1.0)), labels, z, gamma)
    right = np.array([np.sum((labels.annotator == j) & (labels.label == z[labels.item]))
                      for j in range(labels.n_annotators)])
    wrong = np.bincount(labels.annotator, minlength=labels.n_annotators) - right
    a, b = 4.0 + gamma * right, 1.0 + gamma * wrong
    accuracy = draws["accuracy"]
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert np.abs((accuracy.mean(axis=0) - mean) / np.sqrt(var / len(accuracy))).max() < 4.5
    np.testing.assert_allclose(accuracy.var(axis=0), var, rtol=0.15)


def test_one_coin_log_likelihood_is_the_full_model_at_its_confusion_matrices():
    labels = small_labels(seed=10)
    trace = pl.sample(ds.build_one_coin(labels, reliability=1.4), draws=20, chains=2, seed=0,
                      progressbar=False)
    acc = trace.posterior["accuracy"].values
    pi = trace.posterior["class_prior"].values
    c, d = 1, 7
    expected = enumerated_log_likelihood(
        labels, pi[c, d], 1.4,
        lambda j, x: np.where(np.arange(3) == x, acc[c, d, j], (1 - acc[c, d, j]) / 2))
    np.testing.assert_allclose(trace["log_likelihood"]["labels"].values[c, d], expected,
                               rtol=1e-10)
    assert (ds.label_switching_check(trace) == 0).all()


@pytest.mark.slow
def test_one_coin_gibbs_matches_nuts_with_classes_summed_out():
    labels = pl.data.simulate_glad(40, 4, n_classes=3, seed=11).labels
    gibbs, nuts = gibbs_and_nuts(ds.build_one_coin, labels)
    assert pl.diagnostics.convergence_report(nuts).converged
    assert_same_posterior(gibbs, nuts, ("plausibility", "accuracy", "class_prior"))


def mace_labels(seed=12, n_items=40, n_annotators=4, n_classes=3):
    """Labels with annotator 0 a spammer who always says class 0."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_classes, size=n_items)
    rows = []
    for i in range(n_items):
        for j in range(n_annotators):
            if rng.random() < 0.8:
                truthful = rng.random() < (0.1 if j == 0 else 0.8)
                x = truth[i] if truthful else (0 if j == 0 else rng.integers(n_classes))
                rows.append((f"i{i}", f"a{j}", x))
    return pl.data.Labels.from_frame(pd.DataFrame(rows, columns=["item", "annotator", "label"]),
                                     classes=list(range(n_classes)))


def test_mace_log_likelihood_matches_enumeration_and_reliability_is_whole():
    labels = mace_labels()
    trace = pl.sample(ds.build_mace(labels, reliability=2), draws=20, chains=2, seed=0,
                      progressbar=False)
    c = trace.posterior["competence"].values
    xi = trace.posterior["strategy"].values
    pi = trace.posterior["class_prior"].values
    ch, d = 0, 11
    expected = enumerated_log_likelihood(
        labels, pi[ch, d], 2,
        lambda j, x: c[ch, d, j] * (np.arange(3) == x) + (1 - c[ch, d, j]) * xi[ch, d, j, x])
    np.testing.assert_allclose(trace["log_likelihood"]["labels"].values[ch, d], expected,
                               rtol=1e-10)
    with pytest.raises(ValueError, match="whole number"):
        ds.build_mace(labels, reliability=1.5)
    ds.build_mace(labels, reliability=1.5, gibbs=False)


@pytest.mark.slow
@pytest.mark.parametrize("reliability", [1, 2])
def test_mace_gibbs_matches_nuts_with_classes_summed_out(reliability):
    labels = mace_labels()
    gibbs, nuts = gibbs_and_nuts(ds.build_mace, labels, {"target_accept": 0.95},
                                 reliability=reliability)
    folded = pl.sample(ds.build_mace(labels, reliability=reliability, sampler="collapsed"),
                       draws=2000, seed=2, progressbar=False)
    assert pl.diagnostics.convergence_report(nuts).converged
    spammer = int(np.flatnonzero(labels.annotators == "a0")[0])
    for trace in (gibbs, folded):  # the joint scan and the collapsed one
        assert trace.posterior["competence"].mean(("chain", "draw")).values[spammer] < 0.3
        assert_same_posterior(trace, nuts, ("plausibility", "competence", "strategy",
                                            "class_prior"))


def test_label_switching_check_flags_a_partial_swap_of_three_classes():
    rng = np.random.default_rng(13)
    theta = rng.dirichlet([6.0, 1.0, 1.0], size=(2, 40, 4, 3))        # row c: mass on label 0
    theta = np.stack([np.roll(theta[..., c, :], c, axis=-1) for c in range(3)], axis=-2)
    dims = ("chain", "draw", "annotator", "class", "label_class")
    coords = {"class": [0, 1, 2], "label_class": [0, 1, 2]}
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"confusion": (dims, theta)},
                                                          coords=coords)})
    assert (ds.label_switching_check(tree) == 0).all()
    swapped = xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"confusion": (dims, theta[..., [1, 0, 2], :])}, coords=coords)})
    assert (ds.label_switching_check(swapped) == 1).all()


@pytest.mark.slow
def test_hierarchical_joint_and_collapsed_gibbs_match_nuts_with_classes_summed_out():
    labels = pl.data.simulate_glad(40, 5, n_classes=2, ability=(2.0, 0.5), seed=14).labels
    mixed, nuts = gibbs_and_nuts(ds.build_hierarchical, labels, {"target_accept": 0.95})
    folded = pl.sample(ds.build_hierarchical(labels, sampler="collapsed"), draws=2000, seed=2,
                       progressbar=False)
    report = pl.diagnostics.convergence_report(nuts)  # the funnel of kappa: few ESS, no bias
    assert report.table["max_rhat"].max() < 1.05, report.text
    for gibbs in (mixed, folded):  # the joint scan and the collapsed one
        assert (ds.label_switching_check(gibbs) == 0).all()
        assert_same_posterior(gibbs, nuts, ("plausibility", "confusion", "population_confusion",
                                            "class_prior"))
        log_kappa = [np.log(t.posterior["concentration"].values) for t in (gibbs, nuts)]
        se = np.hypot(*(pl.diagnostics.mcse_mean(v) for v in log_kappa))
        assert (np.abs(log_kappa[0].mean((0, 1)) - log_kappa[1].mean((0, 1))) / se).max() < 4.5


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["collapsed", "joint"])
def test_learned_prior_gibbs_matches_nuts_with_classes_summed_out(sampler):
    """On annotators well above chance (a crowd near chance learns ``d`` close to ``o``, and a
    relabelled reading then holds real mass that single chains of NUTS do not cross to)."""
    labels = pl.data.simulate_glad(40, 5, n_classes=3, ability=(2.0, 0.5), seed=14).labels
    gibbs, nuts = gibbs_and_nuts(ds.build_learned_prior, labels, {"target_accept": 0.95},
                                 sampler=sampler)
    assert (ds.label_switching_check(gibbs) == 0).all()
    assert_same_posterior(gibbs, nuts, ("plausibility", "confusion", "class_prior",
                                        "prior_diagonal", "prior_off_diagonal"))
