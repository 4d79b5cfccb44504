"""Per-item log-likelihoods of every aggregation model (``log_likelihood`` of a
``plausible.sample`` trace) against brute force, the reliability factor, bounded blocks,
``az.loo`` / ``az.compare`` on the traces as they come, and GLAD / Su replicated labels."""

import warnings

import arviz as az
import numpy as np
import pytensor.tensor as pt
import pytest
import xarray as xr
from pytensor.graph.replace import clone_replace
from scipy import stats
from scipy.integrate import quad
from scipy.special import expit, logsumexp

import plausible as pl
from plackett_luce_cases import brute_force_likelihood, random_rankings
from plausible.data import Votes, simulate_glad, simulate_nig, simulate_su
from plausible.diagnostics.annotation_predictive import annotation_predictive_check
from plausible.distributed import sample_shards_in_memory
from plausible.inference.declarations import declared_log_likelihood
from plausible.data.label_groups import LabelGroups
from plausible.maths.fallibility import error_rate, label_log_likelihood
from plausible.metrics import set_options
from plausible.metrics.storage import CandidateStorage, storage_form
from plausible.models import glad, plackett_luce, ratings, su_difficulty
from plausible.models.latent_class import class_log_likelihoods, marginal_log_likelihoods
from plausible.models.prirn.irn import irn
from plausible.models.ratings.nig import NIGPrior

DRAWS, CHAINS = 100, 2
CHECKED = [(0, 0), (0, 57), (1, 99)]
"""(chain, draw) pairs compared with brute force."""
FEW = [0, 1, 2]
"""Items compared with brute force."""


def _sample(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: convergence and Pareto-k warnings
        return pl.sample(model, draws=DRAWS, chains=CHAINS, seed=kwargs.pop("seed", 0),
                         progressbar=False, check_convergence=False, **kwargs)


def _loo(trace):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pl.diagnostics.loo(trace)


def _compare(traces):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.compare({name: pl.diagnostics.loo(trace) for name, trace in traces.items()})


def _pointwise(trace) -> xr.DataArray:
    [name] = trace["log_likelihood"].data_vars
    value = trace["log_likelihood"][name]
    assert value.shape[:2] == (CHAINS, DRAWS)
    if name == "ratings":  # ratings models are scored per rating
        assert value.dims == ("chain", "draw", "rating") and "rating_item" in value.coords
    else:
        assert value.dims == ("chain", "draw", "item")
        np.testing.assert_array_equal(value["item"], trace["posterior"]["item"])
    return value


def _at(trace, name, chain, draw) -> np.ndarray:
    return np.asarray(trace["posterior"][name].isel(chain=chain, draw=draw).values, dtype=float)


# --------------------------------------------------------------------------------------
# data and traces (one of each per test module)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def binary():
    """Binary GLAD labels: the common data of the label models (and of Dirichlet votes)."""
    return simulate_glad(40, 5, 2, coverage=0.8, seed=4).labels


@pytest.fixture(scope="module")
def label_traces(binary):
    builds = {
        "glad": pl.models.get("glad")(binary),
        "su-difficulty": pl.models.get("su-difficulty")(binary),
        "annotator-beta": pl.models.get("annotator-beta")(binary),
        "dirichlet": pl.models.get("dirichlet")(Votes.from_labels(binary)),
    }
    return {name: _sample(model, tune=100) for name, model in builds.items()}


@pytest.fixture(scope="module")
def rankings():
    return random_rankings(np.random.default_rng(5), 25, 7, max_readers=3, max_block=3,
                           max_ranked=4)[0]


@pytest.fixture(scope="module")
def nig():
    return simulate_nig(NIGPrior(0.0, 1.0, 3.0, 2.0), 30, 5, seed=6).ratings


# --------------------------------------------------------------------------------------
# (a) pointwise values against brute force
# --------------------------------------------------------------------------------------


def _brute_difficulty(trace, labels, model, gamma):
    """logsumexp_c(log pi_c + gamma L[i, c]) by a plain loop over the labels of FEW items."""
    C = labels.n_classes
    out = {}
    for chain, draw in CHECKED:
        pi = _at(trace, "class_prior", chain, draw)
        if model == "glad":
            alpha, log_beta = (_at(trace, n, chain, draw) for n in ("ability", "log_inverse_difficulty"))
        else:
            phi, delta = (_at(trace, n, chain, draw) for n in ("fallibility", "difficulty"))
        for i in FEW:
            L = np.zeros(C)
            for k in np.flatnonzero(labels.item == i):
                j, x = labels.annotator[k], labels.label[k]
                if model == "glad":
                    r = expit(alpha[j] * np.exp(log_beta[i]))
                else:
                    r = 1 - error_rate(delta[i], phi[j], C)
                with np.errstate(divide="ignore"):  # r = 1 in floating point: log 0
                    for c in range(C):
                        L[c] += np.log(r) if x == c else np.log((1 - r) / (C - 1))
            out[chain, draw, i] = logsumexp(np.log(pi) + gamma * L)
    return out


def _check(pointwise, expected):
    for (chain, draw, i), value in expected.items():
        np.testing.assert_allclose(float(pointwise[chain, draw, i]), value, rtol=1e-10)


@pytest.mark.parametrize("model", ["glad", "su-difficulty"])
@pytest.mark.parametrize("reliability", [1.0, 2.5])
def test_difficulty_models_against_enumeration_over_classes(model, reliability):
    """GLAD / Su (Gibbs build, which samples the classes): the class is summed out of the
    pointwise values, at the trace's reliability; the NUTS build declares the same function,
    and its values sum to the NUTS build's likelihood potential."""
    labels = simulate_glad(30, 4, 3, coverage=0.7, seed=7).labels
    build = pl.models.get(model)
    trace = _sample(build(labels, reliability=reliability), tune=50)
    pointwise = _pointwise(trace)
    _check(pointwise, _brute_difficulty(trace, labels, model.split("-")[0], reliability))
    marginal = build(labels, reliability=reliability, gibbs=False)
    np.testing.assert_array_equal(declared_log_likelihood(marginal).pointwise(trace), pointwise)
    names = ("ability", "log_inverse_difficulty") if model == "glad" else ("fallibility", "difficulty")
    for chain, draw in CHECKED:
        given = {marginal[n]: pt.as_tensor_variable(_at(trace, n, chain, draw))
                 for n in (*names, "class_prior")}
        potential = clone_replace(marginal["labels"], given).eval()
        np.testing.assert_allclose(float(pointwise[chain, draw].sum()), potential, rtol=1e-10)
    assert trace["observed_data"]["labels"].dims == ("annotation",)


def test_su_kernels_match_the_known_parameter_likelihood_with_a_perfect_label():
    """Su's compiled class log-likelihoods equal :func:`plausible.maths.fallibility.
    label_log_likelihood` (the known-parameter mode), ``-inf`` where a perfect label (``delta =
    phi = 0``) rules a class out, and the marginal stays finite."""
    labels = simulate_glad(15, 4, 3, coverage=0.8, seed=12).labels
    rng = np.random.default_rng(13)
    delta, phi = rng.beta(1, 5, labels.n_items), rng.beta(1, 2, labels.n_annotators)
    delta[labels.item[0]] = phi[labels.annotator[0]] = 0.0
    expected = label_log_likelihood(labels, delta, phi)
    assert np.isneginf(expected).any()
    groups = LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)
    family = su_difficulty.PARAMETERS.family
    L = class_log_likelihoods(family, phi[None], delta[None], groups.offsets, groups.partner,
                              groups.label, labels.n_classes)[0]
    np.testing.assert_allclose(L, expected, rtol=1e-10)
    log_prior = np.log(rng.dirichlet(np.ones(labels.n_classes)))
    marginal = marginal_log_likelihoods(family, log_prior[None], 1.0, phi[None], delta[None],
                                        groups.offsets, groups.partner, groups.label)[0]
    np.testing.assert_allclose(marginal, logsumexp(log_prior + expected, axis=1), rtol=1e-10)
    assert np.isfinite(marginal).all()


def test_annotator_beta_against_enumeration(label_traces, binary):
    trace = label_traces["annotator-beta"]
    pointwise = _pointwise(trace)
    expected = {}
    for chain, draw in CHECKED:
        q = float(_at(trace, "prevalence", chain, draw))
        sens, spec = (_at(trace, n, chain, draw) for n in ("sensitivity", "specificity"))
        for i in FEW:
            L = np.zeros(2)
            for k in np.flatnonzero(binary.item == i):
                j, x = binary.annotator[k], binary.label[k]
                L += np.log([1 - spec[j] if x else spec[j], sens[j] if x else 1 - sens[j]])
            expected[chain, draw, i] = logsumexp(np.log([1 - q, q]) + L)
    _check(pointwise, expected)
    observed = trace["observed_data"]["labels"]
    np.testing.assert_array_equal(observed, binary.classes[binary.label])


def test_dirichlet_against_brute_force(binary):
    """The item's plausibility integrated out: the integral of ``Dirichlet(lambda; 1, 1) prod_c
    lambda_c^(1.5 s_c)`` by quadrature over the segment, the same in every draw."""
    votes = Votes.from_labels(binary)
    trace = _sample(pl.models.get("dirichlet")(votes, reliability=1.5), storage="dense")
    pointwise = _pointwise(trace)
    expected = {(c, d, i): np.log(quad(lambda x: x ** (1.5 * votes.counts[i, 0])
                                       * (1 - x) ** (1.5 * votes.counts[i, 1]), 0, 1,
                                       epsabs=0, epsrel=1e-13)[0])
                for c, d in CHECKED for i in FEW}
    _check(pointwise, expected)


def test_prirn_against_brute_force(rankings):
    trace = _sample(pl.models.get("prirn")(rankings, reliability=10.0), storage="dense")
    scores = irn(rankings).values
    expected = {(c, d, i): 10.0 * sum(s * np.log(p) for s, p in zip(
        scores[i], _at(trace, "plausibility", c, d)[i]) if s > 0)
        for c, d in CHECKED for i in FEW}
    _check(_pointwise(trace), expected)


def _dense_plausibility(trace, chain, draw) -> np.ndarray:
    """float64 ``(item, class)`` plausibilities of a draw; in candidate form the pooled classes
    share the pooled mass equally (in float64: the likelihood sees only their total)."""
    if storage_form(trace) == "dense":
        return _at(trace, "plausibility", chain, draw)
    storage = CandidateStorage.from_trace(trace)
    cand = np.asarray(storage.values[chain, draw], dtype=float)
    pooled = np.asarray(storage.pooled[chain, draw], dtype=float)
    dense = np.repeat((pooled / np.maximum(storage.n_pooled, 1))[:, None], storage.classes.size, 1)
    rows, slots = np.nonzero(storage.candidate_class >= 0)
    dense[rows, storage.candidate_class[rows, slots]] = cand[rows, slots]
    return dense


@pytest.mark.parametrize("storage", ["candidate", "dense"])
def test_plackett_luce_against_enumeration_of_orders(rankings, storage):
    """Tied PL likelihood of each item's readers from the compiled sampler's candidate form
    (read natively) and from dense traces, against the sum over every order compatible with
    the ties; the Gibbs build's whole-number reliability multiplies it, as does the NUTS
    build's real one."""
    trace = _sample(pl.models.get("plackett-luce")(rankings, reliability=2), tune=100,
                    storage=storage)
    assert storage_form(trace) == storage
    pointwise = _pointwise(trace)
    selectors = rankings.to_selectors()
    expected = {}
    for chain, draw in CHECKED:
        worth = _dense_plausibility(trace, chain, draw)
        for i in FEW:
            expected[chain, draw, i] = 2 * sum(np.log(brute_force_likelihood(blocks, worth[i]))
                                               for blocks in selectors[i])
    _check(pointwise, expected)
    observed = trace["observed_data"]["rankings"]
    np.testing.assert_array_equal(observed, rankings.classes[rankings.label])
    tempered = pl.models.get("plackett-luce")(rankings, reliability=1.5, gibbs=False)
    np.testing.assert_allclose(declared_log_likelihood(tempered).pointwise(trace), 0.75 * pointwise,
                               rtol=1e-13)


def _brute_ratings(trace, data, gamma, effects=False):
    expected = {}
    for chain, draw in CHECKED:
        mu, sigma2 = (_at(trace, n, chain, draw) for n in ("mu", "sigma2"))
        bias, log_scale = ((_at(trace, n, chain, draw) for n in ("annotator_bias", "annotator_log_scale"))
                           if effects else (np.zeros(data.n_annotators),) * 2)
        for k in np.flatnonzero(np.isin(data.item, FEW)):  # per rating
            i, a = data.item[k], data.annotator[k]
            expected[chain, draw, k] = gamma * stats.norm.logpdf(
                data.score[k], mu[i] + bias[a], np.sqrt(sigma2[i]) * np.exp(log_scale[a]))
    return expected


def test_ratings_against_brute_force_on_the_exact_route_and_a_store(nig, tmp_path):
    model = pl.models.get("normal-inverse-gamma")(nig, threshold=0.0, reliability=1.5)
    trace = _sample(model)
    _check(_pointwise(trace), _brute_ratings(trace, nig, 1.5))
    observed = trace["observed_data"]["ratings"]
    np.testing.assert_array_equal(observed, nig.score)
    np.testing.assert_array_equal(observed["rating_item"], nig.items[nig.item])
    stored = _sample(model, store=tmp_path / "trace.zarr")
    np.testing.assert_array_equal(_pointwise(stored), _pointwise(trace))


def test_ratings_with_annotator_offsets_against_brute_force(nig):
    """The annotator offsets enter the pointwise values (brute force at a synthetic trace:
    no sampling needed)."""
    rng = np.random.default_rng(8)
    posterior = xr.Dataset(
        {"mu": (("chain", "draw", "item"), rng.normal(size=(CHAINS, DRAWS, nig.n_items))),
         "sigma2": (("chain", "draw", "item"), rng.gamma(2.0, size=(CHAINS, DRAWS, nig.n_items))),
         "annotator_bias": (("chain", "draw", "annotator"),
                            rng.normal(size=(CHAINS, DRAWS, nig.n_annotators))),
         "annotator_log_scale": (("chain", "draw", "annotator"),
                                 0.3 * rng.normal(size=(CHAINS, DRAWS, nig.n_annotators)))},
        coords={"chain": np.arange(CHAINS), "draw": np.arange(DRAWS), "item": nig.items})
    trace = xr.DataTree.from_dict({"posterior": posterior,
                                   "constant_data": xr.Dataset({"reliability": 0.7})})
    _check(ratings.log_likelihood(trace, nig).values, _brute_ratings(trace, nig, 0.7, effects=True))


# --------------------------------------------------------------------------------------
# the reliability factor, bounded blocks
# --------------------------------------------------------------------------------------


def test_reliability_multiplies_the_likelihood_given_the_latent_truth(nig):
    """Where no class is summed out the pointwise values are exactly ``gamma`` times those at
    ``gamma = 1`` of the same draws; where one is, ``gamma`` tempers ``L`` inside the
    log-sum-exp (checked against enumeration above), not the result."""
    trace = _sample(ratings.build(nig, threshold=0.0, reliability=2.5))
    plain = trace.copy()
    plain["constant_data"] = xr.DataTree(trace["constant_data"].to_dataset().assign(reliability=1.0))
    np.testing.assert_allclose(_pointwise(trace), 2.5 * ratings.log_likelihood(plain, nig), rtol=1e-13)
    labels = simulate_glad(20, 4, 3, seed=9).labels
    tempered = _sample(glad.build(labels, reliability=2.5), tune=50)
    plain = tempered.copy()
    plain["constant_data"] = xr.DataTree(tempered["constant_data"].to_dataset().assign(reliability=1.0))
    ratio = _pointwise(tempered) / glad.log_likelihood(plain, labels)
    assert not np.allclose(ratio, 2.5)


def test_blocks_of_draws_give_the_same_values(label_traces, binary, rankings, nig):
    """A chunk budget of a few values per block (one draw at a time) changes nothing."""
    cases = [(label_traces[m], pl.models.get(m)(binary))
             for m in ("glad", "su-difficulty", "annotator-beta")]
    cases.append((_sample(pl.models.get("plackett-luce")(rankings), tune=100),
                  pl.models.get("plackett-luce")(rankings)))
    model = ratings.build(nig, threshold=0.0)
    cases.append((_sample(model), model))
    for trace, built in cases:
        with set_options(chunk_elements=10):
            blocked = declared_log_likelihood(built).pointwise(trace)
        np.testing.assert_array_equal(blocked, _pointwise(trace))


def test_sharded_traces_carry_the_log_likelihood(rankings, nig):
    """Shards of items (each sampled by plausible.sample) concatenate their pointwise values
    over items (over ratings for the ratings model, whose ratings here come item by item); PL's candidate form padded to the widest shard reads as the whole one."""
    run = dict(shard_size=8, draws=DRAWS, chains=CHAINS, seed=3)  # widths 6, 6, 6, 2: padded
    sharded = sample_shards_in_memory(rankings, model="plackett-luce", storage="candidate",
                                      model_kwargs={"reliability": 2}, tune=100, **run)
    assert storage_form(sharded) == "candidate"
    pointwise = _pointwise(sharded)
    np.testing.assert_array_equal(
        pointwise, plackett_luce.log_likelihood(sharded, rankings, reliability=2))
    sharded = sample_shards_in_memory(nig, model="normal-inverse-gamma",
                                      model_kwargs={"threshold": 0.0}, **run)
    np.testing.assert_array_equal(_pointwise(sharded)["rating_item"], nig.items[nig.item])
    assert np.isfinite(float(_loo(sharded).elpd))


# --------------------------------------------------------------------------------------
# (b) LOO and model comparison on the traces as they come
# --------------------------------------------------------------------------------------


def test_loo_and_compare_label_models_on_the_same_labels(label_traces, binary):
    for trace in label_traces.values():
        loo = _loo(trace)
        assert np.isfinite(float(loo.elpd)) and np.asarray(loo.pareto_k).shape == (binary.n_items,)
    table = _compare(label_traces)
    assert set(table.index) == set(label_traces) and np.isfinite(table["elpd"]).all()


def test_loo_and_compare_ranking_models(rankings):
    traces = {"plackett-luce": _sample(pl.models.get("plackett-luce")(rankings), tune=100),
              "plackett-luce dense": _sample(pl.models.get("plackett-luce")(rankings), tune=100,
                                             storage="dense"),
              "prirn": _sample(pl.models.get("prirn")(rankings, reliability=1.0))}
    for trace in traces.values():
        assert np.isfinite(float(_loo(trace).elpd))
    assert np.isfinite(_compare(traces)["elpd"]).all()


def test_loo_and_compare_ratings_models(nig):
    priors = {"empirical": "empirical", "vague": NIGPrior(0.0, 0.1, 1.0, 1.0)}
    traces = {name: _sample(ratings.build(nig, threshold=0.0, prior=prior))
              for name, prior in priors.items()}
    for trace in traces.values():
        assert np.isfinite(float(_loo(trace).elpd))
    assert np.isfinite(_compare(traces)["elpd"]).all()


# --------------------------------------------------------------------------------------
# (c) GLAD / Su replicated labels
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["glad", "su-difficulty"])
def test_replicated_labels_keep_the_design(label_traces, binary, model):
    module = {"glad": glad, "su-difficulty": su_difficulty}[model]
    assert pl.models.entry(model).replicate is module.replicate_labels
    trace = label_traces[model]
    new = module.replicate_labels(trace, binary, draws=60, seed=1)
    assert new.shape == (60, binary.n_annotations) and new.dtype.kind == "i"
    assert new.min() >= 0 and new.max() < binary.n_classes
    np.testing.assert_array_equal(new, module.replicate_labels(trace, binary, draws=60, seed=1))
    same = module.replicate_labels(trace, binary, draws=60, seed=1, classes="posterior")
    assert same.shape == new.shape
    # the same items' classes follow the data; new items' classes do not
    assert (same == binary.label).mean() > (new == binary.label).mean() + 0.1
    check = annotation_predictive_check(binary, same)
    assert set(check.names) >= {"votes", "annotator_rate", "agreement"}
    with pytest.raises(ValueError, match="classes must be"):
        module.replicate_labels(trace, binary, classes="old")


def _su_data():
    return simulate_su(120, 6, prior=[0.5, 0.3, 0.2], difficulty=(1.0, 5.0),
                       fallibility=(0.0, 0.6), label_probability=0.7, seed=10).labels


@pytest.mark.parametrize("model", ["glad", "su-difficulty"])
def test_replicated_annotator_rates_cover_the_observed(model):
    """Fitted to data simulated from the model itself, every annotator's replicated rate of
    each class (new items) covers the observed rate in its central 99 % interval (18 rates:
    at 95 % one would fall outside by chance about every other data set)."""
    if model == "glad":
        labels = simulate_glad(120, 6, 3, coverage=0.7, seed=10).labels
    else:
        labels = _su_data()
    module = {"glad": glad, "su-difficulty": su_difficulty}[model]
    trace = _sample(module.build(labels), tune=100, seed=11)
    replicated = module.replicate_labels(trace, labels, draws=200, seed=12)
    for positive in range(labels.n_classes):
        rates = annotation_predictive_check(labels, replicated, positive=positive,
                                            interval=0.99).summary("annotator_rate")
        assert rates["inside"].all(), rates
