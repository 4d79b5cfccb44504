"""The one driver: warm-up and thinning, seeds independent of the threads, lazily computed
variables, per-chain statistics and the trace it assembles, on small kernels written here."""

import dask.array as dsk
import numpy as np
import pytest

from plausible.inference.driver import assemble, kernel_blocks, run_kernel, run_until, sample_kernel
from plausible.inference.kernel import Kernel, Variable, nbytes_per_draw


class Counter(Kernel):
    """Records how many sweeps its chain has run, and a uniform drawn by each sweep."""

    name = "counter"
    default_tune, default_thin = 3, 2
    variables = {"sweeps": Variable((), (), np.int64), "u": Variable(("slot",), (2,))}
    stats = {"odd": Variable((), (), bool)}
    lazy_variables = ("twice",)
    chain_stats = {"total": Variable((), (), np.int64)}

    def __init__(self):
        self.variables = {**self.variables, "twice": Variable(("slot",), (2,))}

    def start(self, rng):
        return {"sweeps": 0}

    def sweep(self, rng, state, out):
        state["sweeps"] += 1
        u = rng.random(2)
        if out is not None:
            out["sweeps"][...] = state["sweeps"]
            out["u"][...] = u
            out["odd"][...] = state["sweeps"] % 2 == 1
            if "twice" in out:
                out["twice"][...] = 2 * u
        return state

    def compute_when_read(self, values):
        return {"twice": 2 * dsk.from_array(values["u"])}

    def finish(self, state, out):
        out["total"][...] = state["sweeps"]


def test_warm_up_and_thinning_keep_every_thin_th_sweep_after_tune():
    values = run_kernel(Counter(), draws=4, chains=2, seed=0)
    np.testing.assert_array_equal(values["sweeps"], [[5, 7, 9, 11]] * 2)  # tune 3, thin 2
    np.testing.assert_array_equal(values["total"], [11, 11])
    values = run_kernel(Counter(), draws=2, chains=1, seed=0, tune=0, thin=1)
    np.testing.assert_array_equal(values["sweeps"], [[1, 2]])
    assert isinstance(Counter(), Kernel)


def test_same_seed_same_draws_whatever_the_threads_and_the_number_of_chains():
    one = run_kernel(Counter(), draws=5, chains=3, seed=7, cores=1)["u"]
    three = run_kernel(Counter(), draws=5, chains=3, seed=7, cores=3)["u"]
    np.testing.assert_array_equal(one, three)
    np.testing.assert_array_equal(run_kernel(Counter(), draws=5, chains=1, seed=7)["u"], one[:1])
    assert not np.array_equal(one[0], one[1])  # chains draw from their own streams
    assert not np.array_equal(run_kernel(Counter(), draws=5, chains=3, seed=8)["u"], one)


class Uniforms(Kernel):
    """Independent draws: a sweep fills a whole block of ``(n, 3)`` uniforms."""

    name = "uniforms"
    independent = True
    default_tune, default_thin = 0, 1
    variables = {"u": Variable(("slot",), (3,))}
    stats: dict = {}

    def start(self, rng):
        return None

    def sweep(self, rng, state, out):
        out["u"][...] = rng.random(out["u"].shape)
        return state


def test_blocks_carry_each_chain_s_state_and_stream_so_the_draws_ignore_the_block_size():
    whole = run_kernel(Counter(), draws=7, chains=2, seed=3)
    blocks = list(kernel_blocks(Counter(), draws=7, chains=2, seed=3, block_draws=3))
    assert [where for where, _ in blocks] == [slice(0, 3), slice(3, 6), slice(6, 7)]
    for name in ("sweeps", "u", "odd"):
        np.testing.assert_array_equal(np.concatenate([b[name] for _, b in blocks], axis=1),
                                      whole[name])
    assert "total" in blocks[-1][1] and "total" not in blocks[0][1]
    np.testing.assert_array_equal(blocks[-1][1]["total"], whole["total"])


def test_an_independent_kernel_writes_a_block_per_sweep_without_warm_up():
    whole = run_kernel(Uniforms(), draws=6, chains=2, seed=1)["u"]
    rng = np.random.default_rng(np.random.SeedSequence(1).spawn(2)[1])
    np.testing.assert_array_equal(whole[1], rng.random((6, 3)))  # one call, the chain's stream
    parts = [b["u"] for _, b in kernel_blocks(Uniforms(), draws=6, chains=2, seed=1,
                                              block_draws=4, cores=1)]
    assert [p.shape[1] for p in parts] == [4, 2]
    rng = np.random.default_rng(np.random.SeedSequence(1).spawn(2)[1])
    np.testing.assert_array_equal(np.concatenate(parts, axis=1)[1],
                                  np.concatenate([rng.random((4, 3)), rng.random((2, 3))]))


def test_the_trace_holds_variables_stats_and_lazily_computed_variables():
    trace = sample_kernel(Counter(), draws=4, chains=2, seed=0, coords={"slot": ["a", "b"]},
                          constant_data={"reliability": 2.0})
    posterior = trace["posterior"]
    assert list(posterior.data_vars) == ["sweeps", "u", "twice"]
    assert posterior["u"].dims == ("chain", "draw", "slot")
    assert list(posterior["slot"].values) == ["a", "b"]
    assert posterior.attrs["sampler"] == "counter" and posterior.attrs["thin"] == 2
    assert posterior.attrs["computed_when_read"] == ""
    assert trace["sample_stats"]["odd"].values.all()
    assert trace["sample_stats"]["total"].dims == ("chain",)
    assert float(trace["constant_data"]["reliability"]) == 2.0
    lazy = sample_kernel(Counter(), draws=4, chains=2, seed=0, lazy=True)
    assert lazy["posterior"].attrs["computed_when_read"] == "twice"
    assert isinstance(lazy["posterior"]["twice"].data, dsk.Array)
    np.testing.assert_array_equal(lazy["posterior"]["twice"].values,
                                  trace["posterior"]["twice"].values)
    assert nbytes_per_draw(Counter()) == 8 + 16 + 16 + 1
    assert nbytes_per_draw(Counter(), skip=("twice",)) == 8 + 16 + 1


def test_assemble_gives_every_trace_its_sample_stats():
    trace = sample_kernel(Counter(), draws=2, chains=1, seed=0)
    bare = assemble(trace["posterior"].to_dataset().drop_vars("twice"))
    assert set(bare.children) == {"posterior", "sample_stats"}
    assert bare["sample_stats"].sizes == {"chain": 1, "draw": 2}


@pytest.mark.parametrize("options, message", [
    ({"draws": 0}, "draws must be a positive integer"),
    ({"chains": 1.5}, "chains must be a positive integer"),
    ({"thin": 0}, "thin must be a positive integer"),
    ({"tune": -1}, "tune must be a whole number"),
])
def test_bad_run_lengths_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        run_kernel(Counter(), **{"draws": 2, "chains": 1, **options})


def test_variable_dims_and_shape_agree():
    with pytest.raises(ValueError, match="differ in length"):
        Variable(("item",), (2, 3))


def test_run_until_keeps_at_most_max_stored_draws_evenly_spread_over_the_run():
    """Past ``max_stored`` every other kept draw is dropped and the thin doubles: the draws
    kept are the whole run's, thinned evenly, and every sweep of the budget ran."""
    def until(v):
        return v["sweeps"].shape[1] >= 500 and v["sweeps"][0, 1] - v["sweeps"][0, 0] >= 8

    whole = run_kernel(Counter(), draws=2000, chains=2, seed=3)
    for budget in ({}, {"max_draws": 20_000}):  # a far budget thins no sooner
        values, stopped, spacing = run_until(Counter(), chains=2, seed=3, max_stored=600,
                                             max_seconds=60, until=until, **budget)
        assert stopped == "converged"
        assert spacing == {"thin": 4 * Counter.default_thin,
                           "sweeps_run": 2000 * Counter.default_thin}
        np.testing.assert_array_equal(values["sweeps"], whole["sweeps"][:, 3::4])
        assert values["total"].tolist() == whole["total"].tolist()  # every sweep ran
    # a run that spends its budget of sweeps keeps the same draws, thinned as it went
    values, stopped, spacing = run_until(Counter(), chains=2, seed=3, max_stored=600,
                                         max_draws=2000, until=lambda v: False)
    assert stopped == "max_draws" and spacing["thin"] == 4 * Counter.default_thin
    np.testing.assert_array_equal(values["sweeps"], whole["sweeps"][:, 3::4])
    # a budget that needs every third draw: thinned by three once, not by two twice (which
    # would keep a third fewer)
    values, stopped, spacing = run_until(Counter(), chains=2, seed=3, max_stored=600,
                                         max_draws=1500, until=lambda v: False)
    assert stopped == "max_draws" and spacing["thin"] == 3 * Counter.default_thin
    np.testing.assert_array_equal(values["sweeps"], whole["sweeps"][:, 1:1500:3])


def test_run_until_extends_the_chains_until_told_and_keeps_their_draws():
    calls = []

    def until(values):
        calls.append(values["u"].shape[1])
        return values["u"].shape[1] >= 1000

    values, stopped, every = run_until(Counter(), chains=2, seed=3, until=until, first_draws=250)
    assert stopped == "converged" and calls == [250, 500, 1000]
    assert every == {"thin": Counter.default_thin, "sweeps_run": 1000 * Counter.default_thin}
    assert set(calls[-1:]) == {values["u"].shape[1]} and "total" in values
    whole = run_kernel(Counter(), draws=1000, chains=2, seed=3)
    np.testing.assert_array_equal(values["u"], whole["u"])  # blocks do not change the draws
    _, stopped, _ = run_until(Counter(), chains=2, seed=3, until=lambda v: False, max_draws=600)
    assert stopped == "max_draws"
    values, stopped, _ = run_until(Counter(), chains=2, seed=3, until=lambda v: False,
                                   max_seconds=1e-9)
    assert stopped == "max_seconds" and values["u"].shape[1] == 250
