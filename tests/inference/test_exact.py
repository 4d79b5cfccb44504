"""plausible.sample's routes and storage: exact batched draws (dense and candidate form) against
the closed form and SBC, reproducibility whatever the threads, streaming to a Zarr store, and
the memory guard's refusals."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import plausible as pl
from plausible.data import Labels, Rankings, Ratings, Votes
from plausible.inference.memory import MemoryBudgetError
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import dirichlet, glad, prirn, ratings

from dirichlet_moments import assert_matches_dirichlet

K = 30


def sparse_votes(n_items=60, n_votes=4, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(K, 0.05), size=n_items)
    return Votes.from_counts(np.stack([rng.multinomial(n_votes, p) for p in probs]))


def test_sparse_votes_are_drawn_exactly_in_candidate_form():
    """Candidates plus the pooled mass are Dirichlet(concentration of the candidates, n_pooled
    alpha) by the aggregation property: closed-form means and variances of every element."""
    votes = sparse_votes()
    reliability, alpha = 2.5, 0.01
    trace = pl.sample(dirichlet.build(votes, reliability=reliability, alpha=alpha), draws=2000,
                      chains=2, seed=4)
    assert pl.metrics.storage_form(trace) == "candidate"
    assert trace.sample_stats.attrs["sampler"] == "plausible.inference.exact"
    post, const = trace.posterior, trace.constant_data
    cls = const["candidate_class"].values
    valid = cls >= 0
    conc = np.where(valid, reliability * np.take_along_axis(votes.counts, np.maximum(cls, 0), 1)
                    + alpha, 0.0)
    assert (np.take_along_axis(votes.counts, np.maximum(cls, 0), 1)[valid] > 0).all()
    np.testing.assert_array_equal(valid.sum(1), (votes.counts > 0).sum(1))
    pooled_conc = const["n_pooled"].values * alpha
    values = post["plausibility_candidates"].values.astype(float).reshape(-1, votes.n_items, cls.shape[1])
    pooled = post["pooled_mass"].values.astype(float).reshape(-1, votes.n_items)
    for width in np.unique(valid.sum(1)):  # items with the same number of candidates together
        rows = valid.sum(1) == width
        draws = np.concatenate([values[:, rows, :width], pooled[:, rows, None]], axis=-1)
        concentration = np.concatenate([conc[rows, :width], pooled_conc[rows, None]], axis=-1)
        assert_matches_dirichlet(draws, concentration, z_max=5.0)


@pytest.mark.slow
def test_simulation_based_calibration_in_candidate_form():
    """SBC of the exact candidate-form draws: plausibilities from Dirichlet(alpha), few votes
    each, the model rebuilt on the votes."""
    alpha = 0.3

    def simulate(rng):
        truth = rng.dirichlet(np.full(K, alpha), size=40)
        counts = np.stack([rng.multinomial(3, p) for p in truth])
        return {"plausibility": truth}, Votes.from_counts(counts)

    result = simulation_based_calibration(lambda v: dirichlet.build(v, alpha=alpha), simulate,
                                          var_names=["plausibility"], n_simulations=20,
                                          draws=100, chains=2, thin=1, seed=7)
    assert result.p_values(bins=10)["plausibility"] > 0.001


def test_same_seed_same_draws_whatever_the_threads():
    model = prirn.build(Rankings.from_selectors([[[[0, 2], [1]], [[1]]], [[[3]]]], classes=12),
                        reliability=5)
    runs = [pl.sample(model, draws=30, chains=3, seed=9, cores=cores) for cores in (1, 2, 3)]
    for run in runs[1:]:
        xr.testing.assert_identical(run.posterior, runs[0].posterior)
    other = pl.sample(model, draws=30, chains=3, seed=10)
    assert not np.array_equal(other.posterior["pooled_mass"].values,
                              runs[0].posterior["pooled_mass"].values)
    first = runs[0].posterior["pooled_mass"].values
    assert not np.array_equal(first[0], first[1]), "chains must not repeat each other"


def test_storage_can_be_forced():
    model = dirichlet.build(sparse_votes(n_items=5))
    dense = pl.sample(model, draws=10, chains=2, seed=0, storage="dense")
    assert pl.metrics.storage_form(dense) == "dense"
    assert dense.posterior["plausibility"].dims == ("chain", "draw", "item", "class")
    assert pl.metrics.storage_form(pl.sample(model, draws=10, chains=2, seed=0,
                                             storage="candidate")) == "candidate"
    cifar_like = dirichlet.build(Votes.from_counts([[3, 1, 0], [0, 2, 2]]))
    assert pl.metrics.storage_form(pl.sample(cifar_like, draws=5, seed=0)) == "dense"  # no gain
    varying = dirichlet.build(Votes.from_counts([[3, 0, 0, 0]]), alpha=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="no candidate storage: its unannotated classes"):
        pl.sample(varying, draws=5, seed=0, storage="candidate")


def test_ratings_with_fixed_priors_are_drawn_exactly():
    frame = pd.DataFrame({"item": [0, 0, 1, 1, 2, 2, 2], "annotator": [0, 1, 0, 1, 0, 1, 2],
                          "score": [1.0, 1.5, 3.0, 2.5, 0.5, 1.0, 0.0]})
    model = ratings.build(Ratings.from_frame(frame), threshold=1.5,
                          prior=ratings.NIGPrior(1.0, 1.0, 3.0, 2.0))
    trace = pl.sample(model, draws=50, chains=2, seed=1)
    assert trace.sample_stats.attrs["sampler"] == "plausible.inference.exact"
    plausibility = trace.posterior["plausibility"]
    assert plausibility.dims == ("chain", "draw", "item", "class")
    np.testing.assert_allclose(plausibility.sum("class").values, 1.0)
    np.testing.assert_array_equal(trace.observed_data["ratings"].values, frame["score"].values)


def test_streamed_store_equals_the_in_memory_trace(tmp_path):
    model = dirichlet.build(sparse_votes(n_items=20))
    memory = pl.sample(model, draws=40, chains=2, seed=3)
    store = tmp_path / "trace.zarr"
    streamed = pl.sample(model, draws=40, chains=2, seed=3, store=store, memory_budget=40_000)
    assert store.is_dir() and not list(tmp_path.glob(".*partial*"))
    values = streamed.posterior["plausibility_candidates"]
    assert values.chunks is not None  # read lazily, block by block
    xr.testing.assert_equal(values.load(), memory.posterior["plausibility_candidates"])
    xr.testing.assert_equal(pl.metrics.annotation_certainty(streamed, top=2),
                            pl.metrics.annotation_certainty(memory, top=2))
    again = pl.sample(model, draws=40, chains=2, seed=4, store=store)  # a trace is replaced
    assert again.posterior.sizes["draw"] == 40
    (tmp_path / "notes").mkdir()
    with pytest.raises(ValueError, match="exists and is not a plausible trace"):
        pl.sample(model, draws=4, seed=4, store=tmp_path / "notes")


def test_exact_draws_over_budget_are_streamed_to_a_temporary_store():
    model = dirichlet.build(sparse_votes(n_items=20))
    with pytest.warns(UserWarning, match="streamed to the Zarr store .*removed at exit"):
        trace = pl.sample(model, draws=40, chains=2, seed=3, memory_budget=20_000)
    assert trace.posterior["plausibility_candidates"].chunks is not None


def test_memory_guard_refuses_before_sampling():
    labels = Labels.from_frame(pd.DataFrame({"item": [0, 0, 1, 1], "annotator": [0, 1, 0, 1],
                                             "label": [0, 1, 1, 1]}))
    with pytest.raises(MemoryBudgetError, match=r"4 chains x 1000 draws of this model would take "
                                                r"[\d.]+ kB, more than the memory budget of "
                                                r"1.0 kB; use fewer draws"):
        pl.sample(glad.build(labels), memory_budget=1000)
    rankings = Rankings.from_selectors([[[[0, 2], [1]]]], classes=8)
    with pytest.raises(MemoryBudgetError, match="4 chains x 1000 draws of this model would take"):
        pl.sample(pl.models.plackett_luce.build(rankings), memory_budget=100)


@pytest.mark.parametrize("kwargs, match", [
    ({"chains": 0}, "chains must be a whole number >= 1"),
    ({"draws": 0}, "draws must be a whole number >= 1"),
    ({"draws": 2.5}, "draws must be a whole number"),
    ({"tune": -1}, "tune must be a whole number >= 0"),
    ({"storage": "sparse"}, "storage must be one of"),
    ({"memory_budget": -5}, "memory_budget must be a number of bytes > 0"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pl.sample(dirichlet.build(Votes.from_counts([[1, 2]])), **kwargs)
