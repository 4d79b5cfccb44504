"""Sharded sampling of any item-independent registry model on a 2-worker LocalCluster: Zarr
store, bit-identical to the in-process run, resume after a killed shard, retries."""

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from plausible import distributed as dist
from plausible.distributed import item_shards
from plausible import metrics
from plausible.data import Rankings, Ratings, Votes
from plausible.models import registry

RUN = dict(shard_size=7, draws=40, tune=20, chains=2, seed=11)


def _votes(n=30, k=4, seed=0):
    rng = np.random.default_rng(seed)
    return Votes.from_counts(rng.multinomial(8, rng.dirichlet(np.ones(k)), size=n))


def _rankings(n=30, k=12, seed=1):
    rng = np.random.default_rng(seed)
    selectors = [[[[int(c) for c in rng.choice(k, rng.integers(1, 3), replace=False)]]
                  for _ in range(rng.integers(1, 4))] for _ in range(n)]
    return Rankings.from_selectors(selectors, classes=k)


def _ratings(n=30, seed=2):
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(n), 3)
    return Ratings.from_frame(pd.DataFrame({"item": item, "annotator": np.tile([0, 1, 2], n),
                                            "score": rng.normal(item % 5, 1.0)}))


CASES = {
    "dirichlet": (_votes, {"reliability": 2.0}),
    "prirn": (_rankings, {"reliability": 10}),
    "plackett-luce": (_rankings, {"reliability": 2}),
    "normal-inverse-gamma": (_ratings, {"threshold": 2.0}),
}


def _plausibility_values(trace) -> dict:
    posterior = trace["posterior"]
    names = [n for n in ("plausibility", "plausibility_candidates", "pooled_mass") if n in posterior]
    return {n: posterior[n].values for n in names}


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def _flaky(monkeypatch, marker: Path, model: str):
    """The shard holding item index 7 (shard 1) fails while ``marker`` exists; ``once`` in it
    removes it at the first failure (a transient fault)."""
    spec = registry.entry(model)

    def build(data, **options):
        if marker.exists() and data.items[0] == 7:
            if marker.read_text() == "once":
                marker.unlink()
            raise RuntimeError("injected shard failure")
        return spec.build(data, **options)

    monkeypatch.setattr(item_shards, "entry", lambda name: dataclasses.replace(spec, build=build))


@pytest.mark.parametrize("model", CASES)
def test_cluster_equals_single_process(tmp_path, client, model):
    make, options = CASES[model]
    data = make()
    progress = []
    report = dist.run_shards(data, tmp_path / "s", model=model, model_kwargs=options,
                             client=client, progress=lambda done, total: progress.append(done),
                             **RUN)
    assert report.completed == [0, 1, 2, 3, 4] and report.ok
    assert progress[0] == 0 and progress[-1] == 5 and sorted(progress) == progress
    lazy = dist.open_trace(tmp_path / "s")
    ref = dist.sample_shards_in_memory(data, model=model, model_kwargs=options, **RUN)
    got, expected = _plausibility_values(lazy), _plausibility_values(ref)
    assert got.keys() == expected.keys()
    for name in got:
        np.testing.assert_array_equal(got[name], expected[name])
    np.testing.assert_array_equal(lazy.posterior["item"].values, data.items)
    for top in (1, 2):
        xr.testing.assert_equal(metrics.annotation_certainty(lazy, top=top),
                                metrics.annotation_certainty(ref, top=top))
    scores = np.random.default_rng(1).random((data.n_items, data.n_classes if model != "normal-inverse-gamma" else 2))
    streamed = dist.stream_metrics(tmp_path / "s", scores=scores, ks=(2,), tops=(1,), client=client)
    np.testing.assert_array_equal(streamed["certainty_top1"],
                                  metrics.annotation_certainty(ref, top=1).values)
    np.testing.assert_allclose(streamed["ua_top2"],
                               metrics.ua_topk_accuracy(ref, scores, k=2).mean("item").values,
                               rtol=0, atol=1e-15)
    # the in-process run over the same shards writes the same draws
    dist.run_shards(data, tmp_path / "seq", model=model, model_kwargs=options, client=None, **RUN)
    for name, values in _plausibility_values(dist.open_trace(tmp_path / "seq")).items():
        np.testing.assert_array_equal(values, got[name])


def test_threaded_workers_keep_the_c_compiler(tmp_path, client):
    """PyMC's change_flags is not thread-safe: shards in threads must not leave pytensor's C
    compiler switched off (the ratings model compiles pytensor functions)."""
    import pytensor

    make, options = CASES["normal-inverse-gamma"]
    dist.run_shards(make(), tmp_path / "s", model="normal-inverse-gamma", model_kwargs=options,
                    client=client, **RUN)
    assert pytensor.config.cxx, "sampling shards in threads disabled pytensor's C compiler"


def test_sharding_keeps_posterior_distribution():
    """Sharded draws vs one sample() over all items: same Dirichlet posterior means."""
    from plausible.inference.sampling import sample
    from plausible.models import dirichlet

    votes = _votes(n=20, k=3, seed=2)
    sharded = dist.sample_shards_in_memory(votes, shard_size=6, draws=2000, chains=2, seed=3)
    whole = sample(dirichlet.build(votes), draws=2000, chains=2, seed=3)
    a = sharded.posterior["plausibility"].mean(("chain", "draw")).values
    b = whole["posterior"]["plausibility"].mean(("chain", "draw")).values
    assert not np.array_equal(sharded.posterior["plausibility"].values,
                              whole["posterior"]["plausibility"].values)
    sd = whole["posterior"]["plausibility"].std(("chain", "draw")).values
    assert np.all(np.abs(a - b) < 5 * sd / np.sqrt(2000) * np.sqrt(2) + 1e-3)


def test_transient_failure_is_retried_and_reported(tmp_path, client, monkeypatch):
    marker = tmp_path / "fail"
    marker.write_text("once")
    _flaky(monkeypatch, marker, "dirichlet")
    votes = _votes()
    report = dist.run_shards(votes, tmp_path / "s", client=client, retries=2, **RUN)
    assert report.ok and list(report.retried) == [1]
    assert "injected shard failure" in report.retried[1][0]
    ref = dist.sample_shards_in_memory(votes, **RUN)
    np.testing.assert_array_equal(dist.open_trace(tmp_path / "s").posterior["plausibility"].values,
                                  ref.posterior["plausibility"].values)


@pytest.mark.parametrize("model", ["prirn", "normal-inverse-gamma"])
def test_crash_then_resume_gives_identical_results(tmp_path, client, monkeypatch, model):
    make, options = CASES[model]
    data = make()
    marker = tmp_path / "fail"
    marker.write_text("always")
    _flaky(monkeypatch, marker, model)
    store = tmp_path / "s"
    kw = dict(model=model, model_kwargs=options, **RUN)
    with pytest.raises(dist.ShardFailure, match="shard 1") as info:
        dist.run_shards(data, store, client=client, retries=1, **kw)
    assert info.value.report.failed.keys() == {1}
    assert not (store / "shard-00001.zarr").exists()  # nothing partial marked complete
    with pytest.raises(ValueError, match="incomplete"):
        dist.open_trace(store)
    # a killed writer leaves a temporary directory behind: never read, removed on resume
    (store / ".tmp-shard-00001-dead").mkdir()
    (store / ".tmp-shard-00001-dead" / "junk").write_text("partial")
    marker.unlink()
    report = dist.run_shards(data, store, client=client, **kw)
    assert report.skipped == [0, 2, 3, 4] and report.completed == [1]
    assert not list(store.glob(".tmp-*"))
    trace = dist.open_trace(store)
    np.testing.assert_array_equal(trace.posterior["item"].values, data.items)  # none lost or twice
    ref = dist.sample_shards_in_memory(data, **kw)
    for name, values in _plausibility_values(trace).items():
        np.testing.assert_array_equal(values, _plausibility_values(ref)[name])


def test_store_of_another_run_is_refused(tmp_path):
    votes = _votes(n=10)
    dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    with pytest.raises(ValueError, match="another run.*seed"):
        dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=1)
    with pytest.raises(ValueError, match="another run.*data_sha256"):
        dist.run_shards(_votes(n=10, seed=5), tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    report = dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    assert report.skipped == [0, 1] and report.completed == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a directory"):
        dist.run_shards(votes, tmp_path / "file", shard_size=5, draws=20, chains=1, seed=0)


def test_models_that_share_parameters_cannot_be_sharded():
    make, options = CASES["normal-inverse-gamma"]
    with pytest.raises(ValueError, match="'glad' shares parameters across items"):
        dist.run_shards(_votes(), "unused", model="glad")
    with pytest.raises(ValueError, match="hyper-parameters are shared across items"):
        dist.run_shards(make(), "unused", model="normal-inverse-gamma",
                        model_kwargs={**options, "prior": "hierarchical"})


def test_bad_scheduler_address_is_a_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="cannot reach a Dask scheduler at 'tcp://127.0.0.1:1'"):
        dist.connect("tcp://127.0.0.1:1", timeout=1)


def _dermatology(data_home):
    from plausible.data import load_dermatology

    return load_dermatology(data_home).rankings


def _snow_joy(data_home):
    from plausible.data import load_snow2008

    return load_snow2008("joy", data_home).annotations


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("model, load, options, shard_size", [
    ("prirn", _dermatology, {"reliability": 20}, 500),
    ("plackett-luce", _dermatology, {"reliability": 1}, 500),
    ("normal-inverse-gamma", _snow_joy, {"threshold": 50.0}, 30),
])
def test_real_data_shards_match_and_resume_after_a_killed_shard(
        tmp_path, client, monkeypatch, data_home, model, load, options, shard_size):
    """The acceptance case: dermatology rankings (PrIRN, Plackett–Luce) and Snow et al.'s joy
    ratings, sharded on the cluster, are bit-identical to the in-process run, and a run whose
    shard 1 was killed mid-write resumes to the same trace, no item lost or twice."""
    data = load(data_home)
    kw = dict(model=model, model_kwargs=options, shard_size=shard_size, draws=30, tune=30,
              chains=2, seed=5)
    clean = dist.run_shards(data, tmp_path / "cluster", client=client, **kw)
    assert clean.ok
    reference = _plausibility_values(dist.sample_shards_in_memory(data, **kw))
    for name, values in _plausibility_values(dist.open_trace(tmp_path / "cluster")).items():
        np.testing.assert_array_equal(values, reference[name])
    # kill: shard 1 fails, and a dead writer's partial directory is left behind
    marker = tmp_path / "fail"
    marker.write_text("always")
    with monkeypatch.context() as patch:
        items = data.subset(slice(shard_size, 2 * shard_size)).items
        spec = registry.entry(model)

        def build(part, **opts):
            if marker.exists() and part.items[0] == items[0]:
                raise RuntimeError("killed")
            return spec.build(part, **opts)

        patch.setattr(item_shards, "entry", lambda name: dataclasses.replace(spec, build=build))
        with pytest.raises(dist.ShardFailure):
            dist.run_shards(data, tmp_path / "resumed", client=None, retries=0, **kw)
    (tmp_path / "resumed" / ".tmp-shard-00001-dead").mkdir()
    report = dist.run_shards(data, tmp_path / "resumed", client=None, **kw)
    assert report.completed == [1] and 1 not in report.skipped
    trace = dist.open_trace(tmp_path / "resumed")
    np.testing.assert_array_equal(trace.posterior["item"].values, data.items)
    for name, values in _plausibility_values(trace).items():
        np.testing.assert_array_equal(values, reference[name])
