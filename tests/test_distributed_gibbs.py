"""The Dawid–Skene family's chain over shards of items on a Dask cluster: the same draws as the
same shards in this process, the same posterior as the one-process sampler, and a partitioned
Parquet dataset read by the workers."""

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible import distributed_gibbs as dg
from plausible.diagnostics import mcse_mean
from plausible.inference.sbc import simulation_based_calibration

MODELS = ["dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene"]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def labels():
    return pl.data.simulate_glad(300, 20, n_classes=3, coverage=0.3, seed=2).labels


def arrays(trace):
    return {**{name: trace.posterior[name].values for name in trace.posterior.data_vars
               if name != "plausibility"},
            "mean": trace.plausibility_summary["mean"].values,
            "top1_share": trace.plausibility_summary["top1_share"].values,
            "final_class": trace.sample_stats["final_class"].values}


@pytest.mark.parametrize("model", MODELS)
def test_the_cluster_chain_is_the_in_process_chain_bit_for_bit(client, labels, model):
    run = dict(n_shards=3, draws=20, chains=2, seed=4, tune=3)
    here = arrays(dg.sample_on_cluster(labels, model, client=None, **run))
    there = arrays(dg.sample_on_cluster(labels, model, client=client, **run))
    assert here.keys() == there.keys()
    for name in here:
        np.testing.assert_array_equal(here[name], there[name], err_msg=name)
    other_seed = arrays(dg.sample_on_cluster(labels, model, client=None, **{**run, "seed": 5}))
    assert not np.array_equal(here["class_prior"], other_seed["class_prior"])


@pytest.mark.parametrize("model", ["dawid-skene", "one-coin"])
def test_the_sharded_chain_has_the_one_process_samplers_posterior(labels, model):
    sharded = dg.sample_on_cluster(labels, model, n_shards=3, draws=1500, chains=4, seed=0)
    single = pl.sample(pl.models.entry(model).build(labels), draws=1500, chains=4, seed=1,
                       keep="draws", log_likelihood=False, check_convergence=False)
    for name in ("class_prior", "plausibility"):
        a, b = (t.posterior[name].transpose("chain", "draw", ...).values for t in (sharded, single))
        mcse = np.hypot(mcse_mean(a), mcse_mean(b))
        moving = mcse > 1e-4
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1)))[moving] / mcse[moving]
        assert z.max() < 4.5, (name, z.max())
    # the shards' summaries are the per-draw plausibilities' own
    np.testing.assert_allclose(pl.metrics.posterior_mean(sharded).values,
                               sharded.posterior["plausibility"].mean(("chain", "draw")).values,
                               rtol=1e-5)


def test_simulation_based_calibration_of_the_sharded_chain():
    n_items, n_annotators, C = 40, 4, 3
    beta = pl.models.dawid_skene.confusion_concentration(C, (4.0, 1.0))

    def simulate(rng):
        pi = rng.dirichlet(np.ones(C))
        theta = np.stack([[rng.dirichlet(beta[c]) for c in range(C)] for _ in range(n_annotators)])
        z = rng.choice(C, n_items, p=pi)
        item = np.repeat(np.arange(n_items), n_annotators)
        annotator = np.tile(np.arange(n_annotators), n_items)
        label = (rng.random((item.size, 1)) > np.cumsum(theta[annotator, z[item]], axis=1)).sum(1)
        labels = pl.data.Labels(item=item, annotator=annotator, label=np.minimum(label, C - 1),
                                items=np.arange(n_items), annotators=np.arange(n_annotators),
                                classes=np.arange(C))
        return {"class_prior": pi, "confusion": theta}, labels

    def sharded(labels, *, draws, chains, seed):
        return dg.sample_on_cluster(labels, n_shards=3, draws=draws, chains=chains, seed=seed)

    result = simulation_based_calibration(None, simulate, sampler=sharded,
                                          var_names=["class_prior", "confusion"],
                                          n_simulations=120, draws=300, chains=2, thin=6,
                                          seed=12)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)


def test_a_partitioned_parquet_dataset_is_read_by_the_shards(client, labels, tmp_path):
    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    frame["task"] = "t" + frame["task"].astype(str)
    frame["worker"] = "w" + frame["worker"].astype(str)
    for k, part in enumerate(np.array_split(frame["task"].unique(), 3)):
        frame[frame["task"].isin(part)].to_parquet(tmp_path / f"part-{k}.parquet", index=False)
    run = dict(draws=200, chains=2, seed=3)
    there = dg.sample_partitions(tmp_path, client=client, n_shards=3, **run)
    here = dg.sample_partitions(tmp_path, client=None, n_shards=3, **run)
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(there)[name], err_msg=name)
    table = pl.metrics.label_certainty(there)
    assert sorted(table["item"].values) == sorted(frame["task"].unique())
    assert list(there.posterior["annotator"].values) == sorted(frame["worker"].unique())
    in_memory = dg.sample_on_cluster(labels, n_shards=3, **run)  # same labels, ids differ
    np.testing.assert_allclose(there.posterior["class_prior"].mean(("chain", "draw")),
                               in_memory.posterior["class_prior"].mean(("chain", "draw")),
                               atol=0.03)
    frame.iloc[:5].to_parquet(tmp_path / "part-9.parquet", index=False)  # items seen again
    with pytest.raises(ValueError, match="has labels in two shards' files"):
        dg.sample_partitions(tmp_path, client=None, n_shards=4, draws=5, chains=1)


def test_other_models_and_the_collapsed_sweep_are_refused_by_name(labels):
    with pytest.raises(ValueError, match="'glad' is not in it"):
        dg.sample_on_cluster(labels, "glad", draws=5)
    with pytest.raises(ValueError, match="runs the joint scan"):
        dg.sample_on_cluster(labels, "dawid-skene", draws=5,
                             model_kwargs={"sampler": "collapsed"})


def test_the_command_line_runs_the_chain_on_workers_reading_a_partitioned_dataset(
        labels, tmp_path, capsys):
    from plausible.cli import main

    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    (tmp_path / "parts").mkdir()
    for k, part in enumerate(np.array_split(frame["task"].unique(), 2)):
        frame[frame["task"].isin(part)].to_parquet(tmp_path / "parts" / f"{k}.parquet")
    out = tmp_path / "out.csv"
    code = main(["aggregate", str(tmp_path / "parts"), "--model", "dawid-skene", "--workers",
                 "1", "--draws", "100", "--chains", "2", "--no-progress", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "1 Dask workers" in text and "read by the workers" in text
    table = pl.aggregation.label_table(dg.sample_partitions(tmp_path / "parts", n_shards=1,
                                                            draws=100, chains=2, seed=0))
    written = pd.read_csv(out).set_index("item")
    np.testing.assert_allclose(written.loc[table.index, "certainty_top1"],
                               table["certainty_top1"])  # one shard, the same seed
    assert main(["aggregate", str(tmp_path / "parts"), "--model", "dawid-skene", "--workers",
                 "1", "--store", str(tmp_path / "s")]) == 2
    assert "--store keeps shards of item-independent models" in capsys.readouterr().err
