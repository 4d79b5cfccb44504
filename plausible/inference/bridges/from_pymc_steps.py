"""A model's declared PyMC step methods as one kernel of the driver.

GLAD, Su's difficulty model, the annotator-beta model and dense Plackett–Luce sample with
exact step methods (``pymc`` ``BlockedStep`` subclasses: conjugate draws, slice sweeps) that
their builders declare (:func:`plausible.inference.declarations.declare_gibbs`) and that
together cover every free variable. :class:`StepsKernel` runs those same step objects in
the one driver (:mod:`plausible.inference.driver`): a chain's state is a PyMC point (the
value variables, on the transformed scale), a sweep is every step in turn, as
``pm.sample``'s compound step runs them, and a kept sweep records the free variables on their
own scale and the deterministics, as ``pm.sample`` does (one compiled function of the point;
computing the deterministics afterwards, vectorised over draws, would change their last bits
with the array's layout). :func:`sample_steps` adds the model's data groups. So ``pl.sample(model)`` and ``pm.sample(model=model,
step=pl.inference.steps(model))`` run the same full conditionals, each written once.

Chains run one after another (:attr:`StepsKernel.max_threads`); each builds its own step objects (their tuned widths and generators are a chain's)
and starts from the model's initial point with ``U(-dispersion, dispersion)`` jitter on every
continuous value variable (R-hat needs dispersed starts), every random number from the
chain's generator. A step that adapts during the warm-up (``tune``: slice widths) stops after
``tune`` sweeps, as in ``pm.sample``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pymc as pm
import xarray as xr
from pymc.backends.arviz import coords_and_dims_for_inferencedata, dict_to_dataset

from plausible.inference.declarations import GibbsDeclaration
from plausible.inference.driver import assemble, run_draws
from plausible.inference.kernel import Kernel, Variable
from plausible.inference.trace_groups import data_groups, model_variables


def jittered(point: dict[str, np.ndarray], rng: np.random.Generator, scale: float) -> dict:
    """``point`` (value variables, transformed scale) plus ``U(-scale, scale)`` jitter on
    every continuous value; discrete ones kept (a jitter would leave their support; their
    steps move them at the first sweep). R-hat needs chains started apart."""
    return {name: value if np.issubdtype(np.asarray(value).dtype, np.integer)
            else value + rng.uniform(-scale, scale, np.shape(value))
            for name, value in point.items()}


@dataclass
class _Chain:
    steps: list
    record: Any  # compiled: value variables -> free variables on their own scale, deterministics
    point: dict[str, np.ndarray]
    sweeps: int = 0


class StepsKernel(Kernel):
    """The step methods ``declarations`` (which cover every free variable of ``model``) as a
    kernel; ``tune`` warm-up sweeps (the steps adapt during them), chain starts jittered by
    ``dispersion`` on the transformed scale (module docstring). Records every free variable,
    every deterministic and the steps' statistics (``stats_dtypes_shapes``)."""

    name = "plausible.inference.bridges.from_pymc_steps"
    default_thin = 1
    max_threads = 1
    """Chains run one after another, as ``pm.sample(cores=1)`` runs them: run in threads,
    the compiled record of a deterministic (``u**-2``) came out one ulp apart between runs
    with the same seed, so the draws would not be reproducible."""

    def __init__(self, model: pm.Model, declarations: tuple[GibbsDeclaration, ...], *,
                 tune: int, dispersion: float = 2.0):
        self.model, self.declarations = model, tuple(declarations)
        covered = {v for d in self.declarations for v in d.vars}
        missing = [rv.name for rv in model.free_RVs if rv not in covered]
        if missing:
            raise ValueError(f"the declared steps do not cover {missing}")
        self.default_tune, self.dispersion = int(tune), float(dispersion)
        recorded = [*model.free_RVs, *model.deterministics]
        self.variables = model_variables(model, [var.name for var in recorded])
        self.stats = {
            name: Variable(tuple(f"{name}_dim_{k}" for k in range(len(shape))), tuple(shape),
                           np.dtype(dtype))
            for declaration in self.declarations
            for name, (dtype, shape) in declaration.step.stats_dtypes_shapes.items()
            if shape is not None}
        self._value_names = [v.name for v in model.value_vars]
        self._record = model.compile_fn(outs=model.replace_rvs_by_values(recorded),
                                        inputs=model.value_vars, point_fn=False,
                                        on_unused_input="ignore")
        self._initial = model.initial_point()

    def start(self, rng: np.random.Generator) -> _Chain:
        point = jittered(self._initial, rng, self.dispersion)
        steps = [declaration.instantiate(self.model) for declaration in self.declarations]
        for step, child in zip(steps, rng.spawn(len(steps))):
            step.setup_chain(child, self.default_tune, 0)
            if self.default_tune == 0:
                step.stop_tuning()
        return _Chain(steps, self._record.copy(), point)

    def sweep(self, rng, state: _Chain, out):
        stats = {}
        for step in state.steps:
            state.point, step_stats = step.step(state.point)
            for entry in step_stats:
                stats.update(entry)
        state.sweeps += 1
        if state.sweeps == self.default_tune:
            for step in state.steps:
                step.stop_tuning()
        if out is not None:
            values = state.record(*(state.point[name] for name in self._value_names))
            for name, value in zip(self.variables, values):
                out[name][...] = value
            for name, value in stats.items():
                if name in out:
                    out[name][...] = value
        return state


def sample_steps(model: pm.Model, declarations, *, draws: int | str, chains: int, seed=None,
                 tune: int, cores: int | None = None, dispersion: float = 2.0,
                 thin: int | None = None, until=None, max_seconds: float | None = None,
                 max_draws: int | None = None, max_stored: int | None = None) -> xr.DataTree:
    """Sample ``model`` with its declared steps in the driver (:class:`StepsKernel`): the
    trace PyMC would write (``posterior`` with the deterministics, ``sample_stats``,
    ``observed_data``, ``constant_data``). ``draws="auto"`` with ``until``, ``max_seconds``,
    ``max_draws``, ``max_stored``: as :func:`plausible.inference.driver.sample_kernel`."""
    kernel = StepsKernel(model, declarations, tune=tune, dispersion=dispersion)
    thin = kernel.default_thin if thin is None else thin
    values, run = run_draws(kernel, draws=draws, chains=chains, seed=seed, tune=tune, thin=thin,
                            cores=cores, until=until, max_seconds=max_seconds,
                            max_draws=max_draws, max_stored=max_stored)
    attrs = {"sampler": kernel.name, "tune": int(tune), **run}
    coords, dims = coords_and_dims_for_inferencedata(model)
    posterior = dict_to_dataset({name: values[name] for name in kernel.variables},
                                coords=coords, dims=dims, inference_library=pm, attrs=attrs)
    stats = dict_to_dataset({name: values[name] for name in kernel.stats},
                            inference_library=pm, attrs=attrs)
    return assemble(posterior, sample_stats=stats, **data_groups(model))


__all__ = ["StepsKernel", "jittered", "sample_steps"]
