"""The label models' chain over shards of items on a Dask cluster (the Dawid–Skene family,
annotator-beta, GLAD, Su): the same draws as the same shards in this process, the same
posterior as the one-process sampler, and a partitioned Parquet dataset read by the
workers."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
from dawid_skene_simulation import simulate_from_prior
from split_rhat import classic_split_rhat

import plausible as pl
from plausible.distributed import cluster_chain as dg
from plausible.diagnostics import mcse_mean
from plausible.inference.sbc import simulation_based_calibration

MODELS = ["dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene"]
DIFFICULTY = ["glad", "su-difficulty"]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


LABELS = "pl.data.simulate_glad(300, 20, n_classes=3, coverage=0.3, seed=2).labels"


@pytest.fixture(scope="module")
def labels():
    return eval(LABELS)


def arrays(trace):
    return {**{name: trace.posterior[name].values for name in trace.posterior.data_vars
               if name != "plausibility"},
            "mean": trace.plausibility_summary["mean"].values,
            "top1_share": trace.plausibility_summary["top1_share"].values,
            **{name: trace.sample_stats[name].values for name in trace.sample_stats.data_vars
               if name == "final_class" or name.endswith("difficulty_mean")}}


@pytest.fixture(scope="module")
def binary():
    return pl.data.simulate_glad(400, 15, n_classes=2, coverage=0.3, seed=3).labels


@pytest.mark.parametrize("model", [*MODELS, "annotator-beta", *DIFFICULTY])
def test_the_cluster_chain_is_the_in_process_chain_bit_for_bit(client, request, model):
    labels = request.getfixturevalue("binary" if model == "annotator-beta" else "labels")
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
    # the shards' summaries are the per-draw plausibilities' own (recomputed in float32)
    np.testing.assert_allclose(pl.metrics.posterior_mean(sharded).values,
                               sharded.posterior["plausibility"].mean(("chain", "draw")).values,
                               rtol=1e-5)
    draws = sharded.posterior["plausibility"].transpose("chain", "draw", ...).values
    rhat = pl.metrics.split_rhat(pl.metrics.accumulated(sharded)).values
    moving = np.isfinite(rhat)
    np.testing.assert_allclose(rhat[moving], classic_split_rhat(draws.astype(np.float64))[moving],
                               rtol=1e-4)


@pytest.mark.parametrize("accuracy", [pytest.param("hierarchical", marks=pytest.mark.slow),
                                      "symmetric", pytest.param("pooled", marks=pytest.mark.slow)])
def test_annotator_beta_over_shards_has_the_one_process_samplers_posterior(binary, accuracy):
    sharded = dg.sample_on_cluster(binary, "annotator-beta", n_shards=3, draws=2000, chains=4,
                                   seed=0, model_kwargs={"accuracy": accuracy})
    single = pl.sample(pl.models.entry("annotator-beta").build(binary, accuracy=accuracy),
                       draws=2000, chains=4, seed=1, log_likelihood=False,
                       check_convergence=False)
    names = list(single.posterior.data_vars)
    assert set(names) <= set(sharded.posterior.data_vars)  # every variable, by its name
    for name in names:
        a, b = (t.posterior[name].transpose("chain", "draw", ...).values
                for t in (sharded, single))
        mcse = np.hypot(mcse_mean(a), mcse_mean(b))
        moving = mcse > 1e-4  # not the plausibilities within 1e-5 of 0 or 1 (tails)
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1)))[moving] / mcse[moving]
        assert z.max() < 4.5, (name, z.max())
    assert float(pl.models.annotator_beta.label_switching_check(sharded).max()) == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", DIFFICULTY)
def test_glad_and_su_over_shards_have_the_one_process_samplers_posterior(labels, model):
    """The driver's lockstep slice of the annotators over shard sums, the shards' item
    slices and classes, against the one-process scan (PyMC's loop with the declared steps),
    a different chain of the same posterior: class prior, annotators, plausibilities and the
    items' parameters."""
    sharded = dg.sample_on_cluster(labels, model, n_shards=3, draws=2000, chains=4, seed=0)
    single = pl.sample(pl.models.entry(model).build(labels), draws=2000, chains=4, seed=1,
                       log_likelihood=False, check_convergence=False)
    annotator, item = (("ability", "log_inverse_difficulty") if model == "glad"
                       else ("fallibility", "difficulty"))
    for name in ("class_prior", annotator):
        a, b = (t.posterior[name].transpose("chain", "draw", ...).values
                for t in (sharded, single))
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) / np.hypot(mcse_mean(a),
                                                                        mcse_mean(b))
        assert z.max() < 4.5, (name, z.max())
    single_mean = single.posterior["plausibility"].mean(("chain", "draw")).values
    np.testing.assert_allclose(pl.metrics.posterior_mean(sharded).values, single_mean,
                               atol=0.03)
    np.testing.assert_allclose(sharded.sample_stats[f"{item}_mean"].mean("chain"),
                               single.posterior[item].mean(("chain", "draw")),
                               atol=0.1 if model == "glad" else 0.03)
    assert pl.diagnostics.convergence_report(sharded).table.loc[annotator, "status"] == "converged"


@pytest.mark.parametrize("model", ["dawid-skene", "glad"])
def test_a_warm_start_on_the_cluster_continues_an_earlier_run(client, labels, model,
                                                                monkeypatch):
    """``init=``: an earlier run on 97 % of the labels (here in one process) starts the
    chains on the cluster from its last state; the same draws as in this process, after a
    lost shard too, and the cold run's posterior."""
    frame = labels.to_frame()
    earlier = frame[np.random.default_rng(0).random(len(frame)) > 0.03]
    first = dg.sample_on_cluster(pl.data.Labels.from_frame(earlier), model, n_shards=3,
                                 draws=300, chains=2, seed=1)
    run = dict(n_shards=3, draws=200, chains=2, seed=4, init=first)  # the same draws: short
    there = dg.sample_on_cluster(labels, model, client=client, **run)
    here = dg.sample_on_cluster(labels, model, **run)
    assert there.posterior.attrs["tune"] == 10
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(there)[name], err_msg=name)
    monkeypatch.setattr(dg, "_shards", lambda client, sources, *, shard: _Faulty(
        sources, shard, fail_at=30))
    lost = dg.sample_on_cluster(labels, model, **run)
    assert lost.posterior.attrs["shard_recoveries"] == 1
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(lost)[name], err_msg=name)
    monkeypatch.undo()
    here = dg.sample_on_cluster(labels, model, **{**run, "draws": 1500})  # the same posterior
    cold = dg.sample_on_cluster(labels, model, n_shards=3, draws=1500, chains=2, seed=5)
    for name in ("class_prior", "ability" if model == "glad" else "confusion"):
        a, b = (t.posterior[name].transpose("chain", "draw", ...).values for t in (here, cold))
        mcse = np.hypot(mcse_mean(a), mcse_mean(b))
        moving = mcse > 1e-4
        z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1)))[moving] / mcse[moving]
        assert z.max() < 4.5, (name, z.max())


def gold(labels, every=5):
    """A known class for every ``every``-th item of ``labels`` (any classes do: clamping is
    checked against the one-process sampler given the same ones), as a Series."""
    rows = np.arange(0, labels.n_items, every)
    return pd.Series(labels.classes[rows % labels.n_classes], index=labels.items[rows])


@pytest.mark.parametrize("model", ["dawid-skene", "glad"])
def test_known_classes_are_clamped_by_the_shards_as_in_one_process(labels, model):
    """Gold items through the shards (a Dawid-Skene-family shard and a difficulty shard):
    one-hot in every kept sweep's summary, and the posterior of the one-process sampler with
    the same known classes (class prior within 4.5 MCSE, plausibilities within 0.03)."""
    known = labels.with_known(gold(labels))
    sharded = dg.sample_on_cluster(known, model, n_shards=3, draws=600, chains=4, seed=0)
    single = pl.sample(pl.models.entry(model).build(known), draws=600, chains=4, seed=1,
                       log_likelihood=False, check_convergence=False)
    rows = known.known >= 0
    summary = sharded["plausibility_summary"]
    for name in ("mean", "top1_share"):
        np.testing.assert_array_equal(summary[name].values[:, rows],
                                      np.broadcast_to(np.eye(3)[known.known[rows]],
                                                      (4, rows.sum(), 3)))
    a, b = (t.posterior["class_prior"].transpose("chain", "draw", ...).values
            for t in (sharded, single))
    z = np.abs(a.mean(axis=(0, 1)) - b.mean(axis=(0, 1))) / np.hypot(mcse_mean(a), mcse_mean(b))
    assert z.max() < 4.5, z
    np.testing.assert_allclose(pl.metrics.posterior_mean(sharded).values,
                               single.posterior["plausibility"].mean(("chain", "draw")).values,
                               atol=0.03)


def test_known_classes_on_the_cluster_and_from_a_partitioned_dataset(client, labels, tmp_path):
    """``pl.aggregate(..., client=, known=)`` is the in-process shards' chain bit for bit;
    the command line's ``--gold`` reaches the shards that read a partitioned dataset, and a
    gold item the dataset lacks is named (the CLI turns that ValueError into its one line)."""
    from plausible.cli import main

    known = gold(labels)
    run = dict(draws=40, chains=2, seed=4)
    result = pl.aggregate(labels, "dawid-skene", client=client, known=known, **run)
    here = dg.sample_on_cluster(labels.with_known(known), "dawid-skene", n_shards=2, **run)
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(result.trace)[name], err_msg=name)
    frame = result.to_frame().set_index("item")
    assert (frame.loc[known.index, "known_class"].to_numpy() == known.to_numpy()).all()
    assert (frame.loc[known.index, "top_class"].to_numpy() == known.to_numpy()).all()
    table = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    (tmp_path / "parts").mkdir()
    for k, part in enumerate(np.array_split(table["task"].unique(), 2)):
        table[table["task"].isin(part)].to_parquet(tmp_path / "parts" / f"{k}.parquet")
    known.rename_axis("task").rename("true_label").reset_index().to_csv(tmp_path / "gold.csv",
                                                                        index=False)
    out = tmp_path / "out.csv"
    argv = ["aggregate", str(tmp_path / "parts"), "--model", "dawid-skene", "--workers", "1",
            "--draws", "40", "--chains", "2", "--no-progress", "--gold",
            str(tmp_path / "gold.csv"), "-o", str(out)]
    assert main(argv) == 0
    written = pd.read_csv(out).set_index("item")
    assert (written.loc[known.index, "known_class"].to_numpy() == known.to_numpy()).all()
    assert (written.loc[known.index, "certainty_top1"] == 1).all()
    with pytest.raises(ValueError, match="known: item 1000000 has no labels in"):
        dg.sample_partitions(tmp_path / "parts", n_shards=1, draws=5, chains=1,
                             known=pd.Series([0, 1], index=[labels.items[0], 10**6]))


def test_the_front_door_runs_the_chain_from_an_address_or_a_partitioned_dataset(client, labels,
                                                                               tmp_path):
    """``pl.aggregate(client=<a scheduler's address>)`` is that cluster's chain bit for bit,
    and ``pl.aggregate(<a folder of Parquet files>, model)`` the chain whose shards read them
    (here in this process), holding no copy of the labels."""
    run = dict(draws=20, chains=2, seed=4)
    result = pl.aggregate(labels, "dawid-skene", client=client.scheduler.address, **run)
    assert result.trace.posterior.attrs["dask_workers"] == 2
    here = dg.sample_on_cluster(labels, "dawid-skene", n_shards=2, **run)
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(result.trace)[name], err_msg=name)
    table = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    (tmp_path / "parts").mkdir()
    for k, part in enumerate(np.array_split(table["task"].unique(), 2)):
        table[table["task"].isin(part)].to_parquet(tmp_path / "parts" / f"{k}.parquet")
    result = pl.aggregate(str(tmp_path / "parts"), "one-coin", **run)
    here = dg.sample_partitions(tmp_path / "parts", "one-coin", n_shards=2, **run)
    for name, value in arrays(here).items():
        np.testing.assert_array_equal(value, arrays(result.trace)[name], err_msg=name)
    assert result.data is None and result.format == "labels" and not result.default
    with pytest.raises(ValueError, match="name the model"):
        pl.aggregate(tmp_path / "parts")
    with pytest.raises(ValueError, match="is not a folder"):
        pl.aggregate(tmp_path / "parts" / "0.parquet", "one-coin")
    with pytest.raises(ValueError, match="fits every candidate in this process"):
        pl.aggregate(tmp_path / "parts", "auto")


def test_auto_draws_over_shards_stop_when_parameters_and_plausibilities_pass(labels):
    run = dict(n_shards=3, chains=2, seed=6)
    auto = dg.sample_on_cluster(labels, draws="auto", **run)
    n = auto.posterior.sizes["draw"]
    assert auto.posterior.attrs["draws_stopped_by"] == "converged" and n in (250, 500, 1000)
    summary = pl.metrics.accumulated(auto)
    assert summary.attrs["first_half_draws"] == n // 2  # each block halves the run again
    assert float(pl.metrics.split_rhat(summary).max()) <= 1.01
    fixed = dg.sample_on_cluster(labels, draws=n, **run)  # the same chain, the same halves
    for name, value in arrays(fixed).items():
        np.testing.assert_array_equal(value, arrays(auto)[name], err_msg=name)
    np.testing.assert_array_equal(summary["mean_first_half"],
                                  pl.metrics.accumulated(fixed)["mean_first_half"])


@pytest.mark.slow  # 120 sharded fits; the bit-for-bit and posterior checks above stay quick
def test_simulation_based_calibration_of_the_sharded_chain():
    def sharded(labels, *, draws, chains, seed):
        return dg.sample_on_cluster(labels, n_shards=3, draws=draws, chains=chains, seed=seed)

    result = simulation_based_calibration(None, simulate_from_prior, sampler=sharded,
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
    worst = pl.diagnostics.convergence_report(there).table.loc["plausibility", "worst"]
    assert worst.startswith("item='t") and ", class=" in worst  # named by string ids
    assert list(there.posterior["annotator"].values) == sorted(frame["worker"].unique())
    in_memory = dg.sample_on_cluster(labels, n_shards=3, **run)  # same labels, ids differ
    np.testing.assert_allclose(there.posterior["class_prior"].mean(("chain", "draw")),
                               in_memory.posterior["class_prior"].mean(("chain", "draw")),
                               atol=0.03)
    frame.iloc[:5].to_parquet(tmp_path / "part-9.parquet", index=False)  # items seen again
    with pytest.raises(ValueError, match="has labels in two shards' files"):
        dg.sample_partitions(tmp_path, client=None, n_shards=4, draws=5, chains=1)


def test_the_models_that_declare_a_cluster_chain_are_those_whose_halves_it_builds():
    """The registry's ``cluster_chain`` against the chain itself: the global half is built
    for every model that declares it, and refused for every other label model."""
    for name in pl.models.available("labels").index:
        if pl.models.entry(name).cluster_chain:
            dg.global_half(name, np.array(["a"]), np.array(["x", "y"]))
        else:
            with pytest.raises(ValueError):
                dg.global_half(name, np.array(["a"]), np.array(["x", "y"]))
    assert dg.runs_on_cluster("glad") and not dg.runs_on_cluster("dirichlet")


def test_other_models_and_the_collapsed_sweep_are_refused_by_name(labels):
    with pytest.raises(ValueError, match="'easy-hard' is not one"):
        dg.sample_on_cluster(labels, "easy-hard", draws=5)
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
    checkpointed = ["aggregate", str(tmp_path / "parts"), "--model", "dawid-skene",
                    "--workers", "1", "--draws", "100", "--chains", "2", "--no-progress",
                    "--store", str(tmp_path / "s"), "--force", "-o", str(out)]
    assert main(checkpointed) == 0
    assert sorted(p.name for p in (tmp_path / "s").iterdir())[-1] == "run.json"
    assert main(checkpointed) == 0  # every chain restored from its last checkpoint
    pd.testing.assert_frame_equal(pd.read_csv(out).set_index("item"), written)
    assert main([*checkpointed, "--draws", "50"]) == 2
    assert "belongs to another run (differs in ['draws'])" in capsys.readouterr().err


class _Faulty(dg.LocalShards):
    """Shards in this process whose ``fail_at``-th call loses a shard (once) or, with
    ``kill=True``, stops the run as a killed driver would."""

    def __init__(self, sources, shard, *, fail_at, kill=False):
        self.calls, self.fail_at, self.kill = 0, fail_at, kill
        super().__init__(sources, shard)

    def __call__(self, method, *args):
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyboardInterrupt if self.kill else dg.ShardLost("injected")
        return super().__call__(method, *args)


@pytest.mark.parametrize("model", [*MODELS, "glad"])
def test_a_lost_shard_or_a_killed_driver_changes_no_draw(labels, model, tmp_path, monkeypatch):
    run = dict(n_shards=3, draws=30, chains=2, seed=4, tune=5)
    uninterrupted = arrays(dg.sample_on_cluster(labels, model, **run))

    def faulty(fail_at, kill=False):
        monkeypatch.setattr(dg, "_shards", lambda client, sources, *, shard: _Faulty(
            sources, shard, fail_at=fail_at, kill=kill))

    cases = [(None, 3), (None, 50), ("lost", 20), ("lost", 50)]  # a fault before, after
    for store, fail_at in cases:                                 # a checkpoint; 2nd chain
        faulty(fail_at)
        trace = dg.sample_on_cluster(labels, model, checkpoint_every=7, **run,
                                     store=store and tmp_path / f"{store}{fail_at}")
        assert trace.posterior.attrs["shard_recoveries"] == 1
        for name, value in arrays(trace).items():
            np.testing.assert_array_equal(value, uninterrupted[name], err_msg=(fail_at, name))
    for fail_at in (25, 60):  # killed in the first chain, in the second
        faulty(fail_at, kill=True)
        with pytest.raises(KeyboardInterrupt):
            dg.sample_on_cluster(labels, model, checkpoint_every=7, store=tmp_path / "k", **run)
        monkeypatch.setattr(dg, "_shards", lambda client, sources, *, shard: dg.LocalShards(
            sources, shard))
        resumed = dg.sample_on_cluster(labels, model, checkpoint_every=7, store=tmp_path / "k",
                                       **run)
        for name, value in arrays(resumed).items():
            np.testing.assert_array_equal(value, uninterrupted[name], err_msg=(fail_at, name))
        shutil.rmtree(tmp_path / "k")


def test_a_killed_worker_and_a_killed_driver_resume_with_nothing_lost(labels, tmp_path):
    """Real faults: a worker process killed mid-run (its nanny starts another), and the
    driver's process killed once a checkpoint exists, then the same call again."""
    distributed = pytest.importorskip("distributed")
    run = dict(n_shards=2, draws=300, chains=2, seed=7, tune=20, checkpoint_every=50)
    uninterrupted = arrays(dg.sample_on_cluster(labels, **run))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        store = tmp_path / "worker"

        def kill_when_checkpointed():
            while not list(store.glob("chain-*/latest.json")):
                time.sleep(0.01)
            os.kill(pids[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_when_checkpointed, daemon=True)
        killer.start()
        trace = dg.sample_on_cluster(labels, client=client, store=store, **run)
        killer.join()
    assert trace.posterior.attrs["shard_recoveries"] >= 1
    for name, value in arrays(trace).items():
        np.testing.assert_array_equal(value, uninterrupted[name], err_msg=name)

    store = tmp_path / "driver"
    script = ("import plausible as pl\nfrom plausible.distributed import cluster_chain as dg\n"
              f"labels = {LABELS}\n"
              f"dg.sample_on_cluster(labels, store={str(store)!r}, **{run!r})\n")
    driver = subprocess.Popen([sys.executable, "-c", script])
    while not list(store.glob("chain-*/latest.json")) and driver.poll() is None:
        time.sleep(0.01)
    driver.kill()
    assert driver.wait() == -signal.SIGKILL  # killed mid-run, not finished
    resumed = arrays(dg.sample_on_cluster(labels, store=store, **run))
    for name, value in arrays(trace).items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)
