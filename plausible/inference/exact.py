"""Exact batched draws: every chain and draw at once, without PyMC's per-draw loop.

When every free variable of a model is drawn by a declared step whose conditional does not
depend on the chain's state (``step.independent``: Dirichlet and PrIRN plausibilities,
Normal–Inverse-Gamma ratings with fixed or empirical-Bayes hyper-parameters), each draw is an
exact, independent posterior draw, and a "chain" is just a batch of them. :func:`sample_exact`
draws each chain's batch through those same steps (compiled kernels for the Dirichlet, one
thread per chain), computes the model's deterministics vectorised
(``pm.compute_deterministics``) and returns the DataTree PyMC would: ``posterior``,
``sample_stats``, ``observed_data``, ``constant_data``.

Storage: dense (the model's variables), or the candidate form of
:mod:`plausible.metrics.storage` for a Dirichlet whose unannotated classes are exchangeable.
With a ``store`` path the posterior is written to a Zarr store draw block by draw block and
opened lazily: the trace never has to fit in memory.

Seeding: chain ``c`` draws from its own generator, child ``c`` of
``numpy.random.SeedSequence(seed).spawn(chains)``, block after block; the draws depend on the
seed (and the number of draws per block, fixed by the memory budget) only, not on the number of
threads.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dask.array as da
import numpy as np
import pymc as pm
import xarray as xr
from pymc.backends.arviz import (
    coords_and_dims_for_inferencedata,
    dict_to_dataset,
    find_constants,
    find_observations,
)

from plausible.inference.chains import run_chains
from plausible.inference.dirichlet_gibbs import CandidateForm, DirichletGibbs
from plausible.inference.driver import assemble
from plausible.metrics.storage import candidate_groups

CANDIDATE_DTYPE = np.float32
"""Storage dtype of candidate-form plausibilities (as the Plackett–Luce sampler's)."""


def covers_exactly(model: pm.Model, steps) -> bool:
    """Whether the declared ``steps`` are all independent and cover every free variable."""
    covered = {var for step in steps for var in step.vars}
    return bool(steps) and covered == set(model.value_vars) and all(
        getattr(step, "independent", False) for step in steps)


def candidate_form(steps) -> CandidateForm | None:
    """The candidate layout when the model is one Dirichlet step that has one."""
    if len(steps) == 1 and isinstance(steps[0], DirichletGibbs):
        return steps[0].candidate_form()
    return None


def _data_groups(model: pm.Model) -> dict[str, xr.Dataset]:
    """``observed_data`` and ``constant_data`` of ``model``, as PyMC writes them."""
    coords, dims = coords_and_dims_for_inferencedata(model)
    groups = {}
    observations = find_observations(model)
    if observations:
        groups["observed_data"] = dict_to_dataset(observations, coords=coords, dims=dims,
                                                  sample_dims=[], inference_library=pm)
    constants = find_constants(model)
    if constants:
        constant = dict_to_dataset(constants, coords=coords, dims=dims, sample_dims=[],
                                   inference_library=pm)
        for name, value in constants.items():  # scalars stay scalars
            if np.ndim(value) == 0 and f"{name}_dim_0" in constant.sizes:
                constant = constant.squeeze(f"{name}_dim_0", drop=True)
        groups["constant_data"] = constant
    return groups


def _dense_block(model: pm.Model, steps, rngs, chains: int, n_draws: int, cores: int) -> xr.Dataset:
    """``n_draws`` draws of every chain: the free variables and the deterministics."""
    values = {}

    def run(c):
        drawn = {}
        for step in steps:
            drawn.update(step.draw_values(rngs[c], n_draws))
        values[c] = drawn

    run_chains(lambda c, *, stop: run(c), [(c,) for c in range(chains)], cores)
    coords, dims = coords_and_dims_for_inferencedata(model)
    names = list(values[0])
    stacked = {name: np.stack([values[c].pop(name) for c in range(chains)]) for name in names}
    posterior = dict_to_dataset(stacked, coords=coords, dims=dims, inference_library=pm)
    if model.deterministics:
        posterior = pm.compute_deterministics(posterior, model=model, extend_dataset=True,
                                              progressbar=False)
    return posterior


def _candidate_block(steps, form: CandidateForm, rngs, chains: int, n_draws: int, cores: int,
                     items, classes) -> xr.Dataset:
    n_items = form.candidate_class.shape[0]
    values = np.empty((chains, n_draws, n_items, form.width), dtype=CANDIDATE_DTYPE)
    pooled = np.empty((chains, n_draws, n_items), dtype=CANDIDATE_DTYPE)
    run_chains(lambda c, *, stop: steps[0].draw_candidates(rngs[c], form, values[c], pooled[c]),
               [(c,) for c in range(chains)], cores)
    posterior, _ = candidate_groups(values, pooled, form.candidate_class, form.n_pooled,
                                    items=items, classes=classes)
    return posterior


def sample_exact(model: pm.Model, steps, *, draws: int, chains: int, seed, form: CandidateForm | None,
                 cores: int, block_draws: int | None = None, store=None) -> xr.DataTree:
    """Independent exact draws of every chain through the declared ``steps`` (see the module
    docstring), dense or, with ``form``, in candidate form; ``block_draws`` draws per chain
    at a time (all by default), written to the Zarr ``store`` when given."""
    rngs = [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(chains)]
    block_draws = draws if block_draws is None else max(1, min(int(block_draws), draws))
    groups = _data_groups(model)
    if form is not None:
        items, classes = (np.asarray(model.coords[dim]) for dim in ("item", "class"))
        constant = candidate_groups(np.empty((0, 0, *form.candidate_class.shape)),
                                    np.empty((0, 0, form.candidate_class.shape[0])),
                                    form.candidate_class, form.n_pooled,
                                    items=items, classes=classes)[1]
        groups["constant_data"] = xr.merge([groups.get("constant_data", xr.Dataset()), constant])

    def block(n):
        if form is None:
            return _dense_block(model, steps, rngs, chains, n, cores)
        return _candidate_block(steps, form, rngs, chains, n, cores, items, classes)

    stats = xr.Dataset(coords={"chain": np.arange(chains), "draw": np.arange(draws)},
                       attrs={"sampler": "plausible.inference.exact", "independent_draws": 1})
    if store is None:
        posterior = xr.concat([block(min(block_draws, draws - start)).assign_coords(
            draw=np.arange(start, min(start + block_draws, draws)))
            for start in range(0, draws, block_draws)], dim="draw") if block_draws < draws \
            else block(draws)
        return assemble(posterior, sample_stats=stats, **groups)
    return _stream(store, block, draws, block_draws, {"sample_stats": stats, **groups})


def _stream(store, block, draws: int, block_draws: int, groups: dict[str, xr.Dataset]) -> xr.DataTree:
    """Write the posterior block by block into the Zarr ``store`` (a new directory, or one
    that holds an earlier trace, replaced), with the other groups, and open it lazily. The
    store is written under a temporary name and renamed when complete."""
    store = Path(store)
    if store.exists() and not (store / "zarr.json").exists():
        raise ValueError(f"store {store} exists and is not a plausible trace; choose a new path")
    tmp = store.with_name(f".{store.name}.partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    for start in range(0, draws, block_draws):
        stop = min(start + block_draws, draws)
        part = block(stop - start).assign_coords(draw=np.arange(start, stop))
        if start == 0:  # the trace with a lazy template of the whole posterior: metadata only
            template = xr.Dataset(
                {name: (var.dims, da.empty((var.shape[0], draws, *var.shape[2:]), dtype=var.dtype,
                                           chunks=(1, block_draws, *var.shape[2:])))
                 for name, var in part.data_vars.items()},
                coords={**{name: c for name, c in part.coords.items() if "draw" not in c.dims},
                        "draw": np.arange(draws)})
            assemble(template, **groups).to_zarr(tmp, compute=False, zarr_format=3,
                                                 consolidated=False)
        fixed = [name for name, c in part.coords.items() if "draw" not in c.dims]
        part.drop_vars(fixed).to_zarr(tmp, group="posterior", region={"draw": slice(start, stop)},
                                      zarr_format=3, consolidated=False)
    if store.exists():
        shutil.rmtree(store)
    os.rename(tmp, store)
    return xr.open_datatree(store, engine="zarr", chunks={}, consolidated=False)
