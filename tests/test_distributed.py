"""Sharded sampling on a 2-worker LocalCluster, Zarr store, resume and retries."""

import os
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from plausible import metrics
from plausible.data.votes import Votes
from plausible import distributed as dist

RUN = dict(shard_size=7, draws=60, chains=2, seed=11)


def _votes(n=30, k=4, seed=0):
    rng = np.random.default_rng(seed)
    return Votes.from_counts(rng.multinomial(8, rng.dirichlet(np.ones(k)), size=n))


def flaky_build(votes, *, marker, **kwargs):
    """Fails while the ``marker`` file exists for the shard holding item index 7 (shard 1);
    ``once=True`` in the file removes it at the first failure (a transient fault)."""
    path = Path(marker)
    if path.exists() and votes.items[0] == 7:
        if path.read_text() == "once":
            path.unlink()
        raise RuntimeError("injected shard failure")
    return dist.build_dirichlet(votes)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def test_cluster_equals_single_process(tmp_path, client):
    votes = _votes()
    report = dist.run_shards(votes, tmp_path / "s", client=client, **RUN)
    assert report.completed == [0, 1, 2, 3, 4] and report.ok
    lazy = dist.open_trace(tmp_path / "s")
    p = lazy.posterior["plausibility"]
    assert p.chunks is not None  # dask-backed
    ref = dist.sample_shards_in_memory(votes, **RUN)
    np.testing.assert_array_equal(p.values, ref.posterior["plausibility"].values)
    np.testing.assert_array_equal(p["item"].values, np.arange(30))
    # metrics stream over the lazy trace and equal the in-memory computation
    scores = np.random.default_rng(1).random((30, 4))
    for top in (1, 2):
        xr.testing.assert_equal(metrics.annotation_certainty(lazy, top=top),
                                metrics.annotation_certainty(ref, top=top))
    lazy_acc = metrics.ua_topk_accuracy(lazy, scores, k=2)
    ref_acc = metrics.ua_topk_accuracy(ref, scores, k=2)
    xr.testing.assert_equal(lazy_acc, ref_acc)
    streamed = dist.stream_metrics(tmp_path / "s", scores=scores, ks=(2,), tops=(1,), client=client)
    np.testing.assert_array_equal(streamed["certainty_top1"],
                                  metrics.annotation_certainty(ref, top=1).values)
    np.testing.assert_allclose(streamed["ua_top2"], ref_acc.mean("item").values, rtol=0, atol=1e-15)
    # threaded workers must not leave pytensor's C compiler switched off (PyMC's change_flags)
    import pytensor

    assert pytensor.config.cxx, "sampling shards in threads disabled pytensor's C compiler"
    # in-process run over the same shards writes the same draws
    dist.run_shards(votes, tmp_path / "seq", client=None, **RUN)
    np.testing.assert_array_equal(dist.open_trace(tmp_path / "seq").posterior["plausibility"].values,
                                  p.values)


def test_sharding_keeps_posterior_distribution():
    """Sharded draws vs one sample() over all items: same Dirichlet posterior means."""
    from plausible.inference.sampling import sample

    votes = _votes(n=20, k=3, seed=2)
    sharded = dist.sample_shards_in_memory(votes, shard_size=6, draws=2000, chains=2, seed=3)
    whole = sample(dist.build_dirichlet(votes), draws=2000, chains=2, seed=3, progressbar=False,
                   check_convergence=False)
    a = sharded.posterior["plausibility"].mean(("chain", "draw")).values
    b = whole["posterior"]["plausibility"].mean(("chain", "draw")).values
    assert not np.array_equal(sharded.posterior["plausibility"].values,
                              whole["posterior"]["plausibility"].values)
    sd = whole["posterior"]["plausibility"].std(("chain", "draw")).values
    assert np.all(np.abs(a - b) < 5 * sd / np.sqrt(2000) * np.sqrt(2) + 1e-3)


def test_transient_failure_is_retried_and_reported(tmp_path, client):
    marker = tmp_path / "fail"
    marker.write_text("once")
    votes = _votes()
    kw = dict(build=flaky_build, build_kwargs={"marker": str(marker)}, **RUN)
    report = dist.run_shards(votes, tmp_path / "s", client=client, retries=2, **kw)
    assert report.ok and list(report.retried) == [1]
    assert "injected shard failure" in report.retried[1][0]
    ref = dist.sample_shards_in_memory(votes, **RUN)
    np.testing.assert_array_equal(dist.open_trace(tmp_path / "s").posterior["plausibility"].values,
                                  ref.posterior["plausibility"].values)


def test_crash_then_resume_gives_identical_results(tmp_path, client):
    marker = tmp_path / "fail"
    marker.write_text("always")
    votes = _votes()
    store = tmp_path / "s"
    kw = dict(build=flaky_build, build_kwargs={"marker": str(marker)}, **RUN)
    with pytest.raises(dist.ShardFailure, match="shard 1") as info:
        dist.run_shards(votes, store, client=client, retries=1, **kw)
    assert info.value.report.failed.keys() == {1}
    assert not (store / "shard-00001.zarr").exists()  # nothing partial marked complete
    with pytest.raises(ValueError, match="incomplete"):
        dist.open_trace(store)
    # a killed writer leaves a temporary directory behind: never read, removed on resume
    (store / ".tmp-shard-00001-dead").mkdir()
    (store / ".tmp-shard-00001-dead" / "junk").write_text("partial")
    marker.unlink()
    report = dist.run_shards(votes, store, client=client, **kw)
    assert report.skipped == [0, 2, 3, 4] and report.completed == [1]
    assert not list(store.glob(".tmp-*"))
    trace = dist.open_trace(store)
    items = trace.posterior["item"].values
    np.testing.assert_array_equal(items, np.arange(30))  # none duplicated or missing
    ref = dist.sample_shards_in_memory(votes, **RUN)
    np.testing.assert_array_equal(trace.posterior["plausibility"].values,
                                  ref.posterior["plausibility"].values)


def test_store_of_another_run_is_refused(tmp_path):
    votes = _votes(n=10)
    dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    with pytest.raises(ValueError, match="another run.*seed"):
        dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=1)
    with pytest.raises(ValueError, match="another run.*votes_sha256"):
        dist.run_shards(_votes(n=10, seed=5), tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    report = dist.run_shards(votes, tmp_path / "s", shard_size=5, draws=20, chains=1, seed=0)
    assert report.skipped == [0, 1] and report.completed == []


def test_bad_scheduler_address_is_a_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="cannot reach a Dask scheduler at 'tcp://127.0.0.1:1'"):
        dist.connect("tcp://127.0.0.1:1", timeout=1)
