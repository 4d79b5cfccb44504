"""A kernel (:mod:`plausible.inference.kernel`) as a PyMC step method, and every model's steps.

:class:`KernelStep` runs a kernel's sweep inside ``pm.sample``: the same full conditionals,
written once, serve :func:`plausible.sample`'s driver and PyMC. :func:`steps` returns the
step methods of any registered model, so that::

    pm.sample(model=model, step=pl.inference.steps(model))

samples the posterior that ``pl.sample(model)`` samples. :func:`declare_kernel` is how a model
builder declares its kernel for both routes.

PyMC's steps read and write *value* variables (PyMC's transforms: log-ratio for simplices,
log for positive variables, log-odds for Beta); a kernel works on constrained values, so the
step maps between them with the transforms' own compiled ``forward`` and ``backward``. The
kernel's state lives in the step between sweeps of a chain (``setup_chain`` resets it); a
chain starts from the kernel's own dispersed start (``start="kernel"``, so chains start
apart, which PyMC does not do for custom steps) or from the chain's initial point
(``start="point"``). When another step has changed the covered variables since the last
sweep, the state is rebuilt from the point (``kernel.load``), drawing any augmentation the
model sums out from its exact conditional.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pymc as pm
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.inference.declarations import declare_gibbs, declare_sampler, declared_gibbs
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import PyMCKernel, nbytes_per_draw

STARTS = ("kernel", "point")


def _transform_functions(model: pm.Model, value_var):
    """``(forward, backward)``: constrained value -> value variable, and back. A value on the
    edge of the support (0 or 1, where a log-scale transform is infinite) is moved to the
    nearest representable interior point."""
    rv = model.values_to_rvs[value_var]
    transform = model.rvs_to_transforms.get(rv)
    if transform is None:
        return (lambda x: np.asarray(x, dtype=value_var.dtype),
                lambda v: np.asarray(v))
    inputs = rv.owner.inputs
    x, v = rv.type(), value_var.type()
    to_value = pytensor.function([x], transform.forward(x, *inputs), on_unused_input="ignore",
                                 mode="FAST_COMPILE")
    backward = pytensor.function([v], transform.backward(v, *inputs), on_unused_input="ignore",
                                 mode="FAST_COMPILE")

    def forward(value):
        out = to_value(value)
        if np.all(np.isfinite(out)):
            return out
        # an exact draw that underflowed onto the support's edge (a confusion row's 0, a Beta's
        # 1): the nearest representable interior point, which the log-scale transforms need
        value = np.asarray(value, dtype=np.float64)
        return to_value(np.where(value == 0, np.finfo(np.float64).tiny,
                                 np.where(value == 1, 1 - np.finfo(np.float64).epsneg, value)))

    return forward, backward


class KernelStep(BlockedStep):
    """Run ``kernel``'s sweep (a :class:`~plausible.inference.kernel.PyMCKernel`, or a
    function of no argument that builds one) as one PyMC step over ``vars`` (module
    docstring). ``start``: ``"kernel"`` (default) or ``"point"``."""

    name = "kernel"

    def __init__(self, vars, kernel, start: str = "kernel", model=None, rng=None,
                 blocked=True):
        if not isinstance(kernel, PyMCKernel) and callable(kernel):
            kernel = kernel()  # a factory: the kernel is built when the step is
        if not isinstance(kernel, PyMCKernel):
            raise TypeError(f"{type(kernel).__name__} is not a kernel PyMC can run (it needs "
                            "load and to_point)")
        if start not in STARTS:
            raise ValueError(f"start must be one of {STARTS}, got {start!r}")
        model = modelcontext(model)
        self.vars = get_value_vars_from_user_vars(vars, model)
        self.kernel, self.start = kernel, start
        # per instance: the kernel's statistics (PyMC reads both attributes)
        self.stats_dtypes_shapes = {name: (np.dtype(v.dtype), list(v.shape))
                                    for name, v in kernel.stats.items()}
        self.stats_dtypes = [{name: np.dtype(v.dtype) for name, v in kernel.stats.items()}]
        self._value_names = {model.values_to_rvs[v].name: v.name for v in self.vars}
        self._transforms = {model.values_to_rvs[v].name: _transform_functions(model, v)
                            for v in self.vars}
        self._draw = {name: np.zeros(v.shape, dtype=v.dtype)
                      for name, v in {**kernel.variables, **kernel.stats}.items()}
        self.rng = np.random.default_rng(rng)
        self._state, self._written = None, None

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Start a chain: the kernel's state is built anew at its first step."""
        super().setup_chain(rng, tune, draws)
        self._state, self._written = None, None

    def _moved(self, point) -> bool:
        """Whether the point's covered values differ from what this step last wrote."""
        return self._written is None or any(
            not np.array_equal(point[name], self._written[name]) for name in self._written)

    def step(self, point):
        """PyMC's step method: the new point from ``point``, after one sweep of the kernel (see
        the class)."""
        kernel = self.kernel
        if self._state is None and self.start == "kernel":
            self._state = kernel.start(self.rng)
        elif self._state is None or self._moved(point):
            if self._state is not None:
                kernel.close(self._state)
            values = {name: backward(point[self._value_names[name]])
                      for name, (_, backward) in self._transforms.items()}
            self._state = kernel.load(values, self.rng)
        self._state = kernel.sweep(self.rng, self._state, self._draw)
        new_point = dict(point)
        for name, value in kernel.to_point(self._state, self._draw).items():
            if name in self._value_names:
                forward, _ = self._transforms[name]
                new_point[self._value_names[name]] = np.asarray(
                    forward(np.asarray(value)), dtype=point[self._value_names[name]].dtype)
        self._written = {v: new_point[v] for v in self._value_names.values()}
        return new_point, [{name: self._draw[name].copy() for name in kernel.stats}]

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_state"] = None  # a chain's state (thread pools) does not travel
        return state


def steps(model: pm.Model, *, start: str | None = None) -> list:
    """The step methods that sample ``model`` (a registered model's build) exactly in PyMC:
    the Gibbs steps its builder declared — its kernel as one :class:`KernelStep` over every
    free variable where it has one, else conjugate steps (any variable they leave is PyMC's to
    assign, NUTS or slice). Pass them to ``pm.sample(model=model, step=steps(model))``.
    ``start`` (``"kernel"`` or ``"point"``) overrides where a :class:`KernelStep` starts its
    chains. ``ValueError`` for a model with none (a ``gibbs=False`` or ``compiled=False``
    build, left to PyMC's own samplers)."""
    declared = declared_gibbs(model)
    if not declared:
        raise ValueError("this model declares no exact steps (a gibbs=False or compiled=False "
                         "build): pm.sample assigns its own samplers")
    built = [declaration.instantiate(model) for declaration in declared]
    if start is not None:
        for step in built:
            if isinstance(step, KernelStep):
                if start not in STARTS:
                    raise ValueError(f"start must be one of {STARTS}, got {start!r}")
                step.start = start
    return built


def declare_kernel(model: pm.Model, kernel, *, coords, constant_data=None) -> None:
    """Declare ``kernel`` (a :class:`~plausible.inference.kernel.PyMCKernel`) as ``model``'s
    sampler on both routes: :func:`plausible.sample` runs it in the driver
    (:func:`~plausible.inference.driver.sample_kernel`, dense storage, the trace's dims named
    by ``coords`` and ``constant_data`` written beside it), and it is the model's one PyMC
    step (:class:`KernelStep` over every free variable, :func:`steps`)."""
    declare_gibbs(model, KernelStep, model.free_RVs, replace=True, kernel=kernel)
    lazy = tuple(kernel.lazy_variables)

    def run(*, draws, chains, seed=None, cores=None, tune=None, thin=None, lazy=False, **auto):
        return sample_kernel(kernel, draws=draws, chains=chains, seed=seed, cores=cores,
                             tune=tune, thin=thin, lazy=lazy, coords=coords,
                             constant_data=constant_data, **auto)

    declare_sampler(model, run, form="dense", nbytes_per_draw=nbytes_per_draw(kernel),
                    lazy_nbytes_per_draw=nbytes_per_draw(kernel, skip=lazy) if lazy else None)


__all__ = ["KernelStep", "declare_kernel", "steps"]
