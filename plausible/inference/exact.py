"""Exact batched draws: every chain and draw at once, without a per-draw loop.

When every free variable of a model is drawn by a declared step whose conditional does not
depend on the chain's state (``step.independent``: Dirichlet and PrIRN plausibilities,
Normal–Inverse-Gamma ratings with fixed or empirical-Bayes hyper-parameters), each draw is an
exact, independent posterior draw, and a "chain" is just a batch of them. The steps are then
one :class:`ExactKernel` (an independent kernel of :mod:`plausible.inference.kernel`: a sweep
writes a whole block of draws, ignoring the state), run by the one driver
(:func:`plausible.inference.driver.kernel_blocks`: seeds, threads, blocks);
:func:`sample_exact` adds the model's deterministics (vectorised) and its data groups.

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
from pymc.backends.arviz import coords_and_dims_for_inferencedata, dict_to_dataset

from plausible.inference.step_methods.dirichlet_gibbs import CandidateForm, DirichletGibbs
from plausible.inference.driver import assemble, kernel_blocks
from plausible.inference.kernel import Kernel, Variable
from plausible.inference.trace_groups import data_groups, model_variables, with_deterministics
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


class ExactKernel(Kernel):
    """The declared independent ``steps`` of a model as one independent kernel: a sweep fills
    a block of exact draws of every free variable (dense), or, with ``form``, of the one
    Dirichlet step's candidate values ``candidate_values (item, candidate)`` and pooled mass
    ``pooled (item,)`` (:data:`CANDIDATE_DTYPE`)."""

    name = "plausible.inference.exact"
    independent = True
    default_tune, default_thin = 0, 1
    stats: dict = {}

    def __init__(self, model: pm.Model, steps, form: CandidateForm | None = None):
        self.steps, self.form = list(steps), form
        if form is None:
            self.variables = model_variables(model, [rv.name for rv in model.free_RVs])
        else:
            n_items, width = form.candidate_class.shape
            self.variables = {"candidate_values": Variable(("item", "candidate"), (n_items, width),
                                                           CANDIDATE_DTYPE),
                              "pooled": Variable(("item",), (n_items,), CANDIDATE_DTYPE)}

    def start(self, rng):
        return None

    def sweep(self, rng, state, out):
        if self.form is not None:
            self.steps[0].draw_candidates(rng, self.form, out["candidate_values"], out["pooled"])
        else:
            for step in self.steps:
                step.draw_values(rng, out)
        return state


def sample_exact(model: pm.Model, steps, *, draws: int, chains: int, seed, form: CandidateForm | None,
                 cores: int, block_draws: int | None = None, store=None) -> xr.DataTree:
    """Independent exact draws of every chain through the declared ``steps`` (see the module
    docstring), dense or, with ``form``, in candidate form; ``block_draws`` draws per chain
    at a time (all by default), written to the Zarr ``store`` when given."""
    kernel = ExactKernel(model, steps, form)
    groups = data_groups(model)
    coords, dims = coords_and_dims_for_inferencedata(model)
    if form is not None:
        items, classes = (np.asarray(model.coords[dim]) for dim in ("item", "class"))
        constant = candidate_groups(np.empty((0, 0, *form.candidate_class.shape)),
                                    np.empty((0, 0, form.candidate_class.shape[0])),
                                    form.candidate_class, form.n_pooled,
                                    items=items, classes=classes)[1]
        groups["constant_data"] = xr.merge([groups.get("constant_data", xr.Dataset()), constant])

    def dataset(values) -> xr.Dataset:
        if form is not None:
            return candidate_groups(values["candidate_values"], values["pooled"],
                                    form.candidate_class, form.n_pooled, items=items,
                                    classes=classes)[0]
        return with_deterministics(dict_to_dataset(values, coords=coords, dims=dims,
                                                   inference_library=pm), model)

    blocks = ((where, dataset(values).assign_coords(draw=np.arange(where.start, where.stop)))
              for where, values in kernel_blocks(kernel, draws=draws, chains=chains, seed=seed,
                                                 cores=cores, block_draws=block_draws))
    stats = xr.Dataset(coords={"chain": np.arange(chains), "draw": np.arange(draws)},
                       attrs={"sampler": kernel.name, "independent_draws": 1})
    if store is None:
        parts = [part for _, part in blocks]
        posterior = parts[0] if len(parts) == 1 else xr.concat(parts, dim="draw")
        return assemble(posterior, sample_stats=stats, **groups)
    return _stream(store, blocks, draws, block_draws or draws, {"sample_stats": stats, **groups})


def _stream(store, blocks, draws: int, block_draws: int, groups: dict[str, xr.Dataset]
            ) -> xr.DataTree:
    """Write the posterior's ``blocks`` (``(draws_slice, dataset)``) into the Zarr ``store``
    (a new directory, or one that holds an earlier trace, replaced), with the other groups,
    and open it lazily. The store is written under a temporary name and renamed when
    complete."""
    store = Path(store)
    if store.exists() and not (store / "zarr.json").exists():
        raise ValueError(f"store {store} exists and is not a plausible trace; choose a new path")
    tmp = store.with_name(f".{store.name}.partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    for where, part in blocks:
        if where.start == 0:  # the trace with a lazy template of the whole posterior: metadata only
            template = xr.Dataset(
                {name: (var.dims, da.empty((var.shape[0], draws, *var.shape[2:]), dtype=var.dtype,
                                           chunks=(1, block_draws, *var.shape[2:])))
                 for name, var in part.data_vars.items()},
                coords={**{name: c for name, c in part.coords.items() if "draw" not in c.dims},
                        "draw": np.arange(draws)})
            assemble(template, **groups).to_zarr(tmp, compute=False, zarr_format=3,
                                                 consolidated=False)
        fixed = [name for name, c in part.coords.items() if "draw" not in c.dims]
        part.drop_vars(fixed).to_zarr(tmp, group="posterior", region={"draw": where},
                                      zarr_format=3, consolidated=False)
    if store.exists():
        shutil.rmtree(store)
    os.rename(tmp, store)
    return xr.open_datatree(store, engine="zarr", chunks={}, consolidated=False)
