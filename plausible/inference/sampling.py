"""``plausible.sample``: PyMC sampling with the model's declared Gibbs steps.

Exact conjugate steps declared by the model builder (:mod:`plausible.inference.conjugacy`)
are assigned to their variables; PyMC assigns NUTS (or slice, ...) to every other free
variable, all inside one ``pm.sample`` run. Chains start from points dispersed around the
model's initial point in the unconstrained space (R-hat needs dispersed starts; PyMC starts
chains with custom steps all at the same point). The result is an ``xarray.DataTree``
(ArviZ 1.x) checked by :func:`plausible.diagnostics.convergence_report`.
"""

import warnings

import numpy as np
import pymc as pm
import xarray as xr

from plausible.diagnostics.convergence import convergence_report
from plausible.inference.conjugacy import declared_gibbs


def dispersed_initvals(model: pm.Model, chains: int, rng: np.random.Generator, scale: float):
    """One initial point per chain: the model's initial point plus ``U(-scale, scale)``
    jitter on every continuous unconstrained value variable, mapped back to the constrained
    space. Discrete variables keep their initial value (a jitter would leave their support;
    their Gibbs steps move them at the first iteration)."""
    initial = model.initial_point()
    free = model.free_RVs
    to_constrained = model.compile_fn(
        outs=model.replace_rvs_by_values(free),
        inputs=model.value_vars,
        point_fn=True,
        on_unused_input="ignore",
    )
    starts = []
    for _ in range(chains):
        jittered = {
            name: value if np.issubdtype(np.asarray(value).dtype, np.integer)
            else value + rng.uniform(-scale, scale, size=np.shape(value))
            for name, value in initial.items()
        }
        starts.append({rv.name: value for rv, value in zip(free, to_constrained(jittered))})
    return starts


def sample(
    model: pm.Model,
    draws: int = 1000,
    *,
    tune: int | None = None,
    chains: int = 4,
    seed: int | None = None,
    cores: int = 1,
    dispersion: float = 2.0,
    progressbar: bool = True,
    check_convergence: bool = True,
    **kwargs,
) -> xr.DataTree:
    """Sample ``model`` and return its trace as an ``xarray.DataTree``.

    Parameters
    ----------
    draws, chains, cores
        As in ``pm.sample``; ``cores=1`` runs chains sequentially, which for vectorised
        Gibbs steps is usually as fast as processes and needs no pickling.
    tune
        Warm-up iterations; by default, when the model's declared steps cover every free
        variable, the most any of them asks for (``default_tune_steps``: 0 for exact
        conditional draws, which need no tuning; slice steps tune their widths), and
        1000 otherwise.
    seed
        Makes the whole run reproducible: same seed, same draws.
    dispersion
        Half-width of the uniform jitter of chain starts in the unconstrained space.
    check_convergence
        Warn with :func:`plausible.diagnostics.convergence_report`'s text when a
        variable fails the R-hat / ESS thresholds.
    **kwargs
        Passed to ``pm.sample`` (e.g. ``target_accept`` for NUTS).
    """
    declarations = declared_gibbs(model)
    steps = [declaration.instantiate(model) for declaration in declarations]
    covered = {var for step in steps for var in step.vars}
    all_exact = covered == set(model.value_vars)
    if tune is None:
        tune = max((step.default_tune_steps or 0 for step in steps), default=0) if all_exact else 1000
    init_seed, sample_seed = np.random.SeedSequence(seed).spawn(2)
    initvals = dispersed_initvals(model, chains, np.random.default_rng(init_seed), dispersion)
    with model:
        trace = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            step=steps or None,
            initvals=initvals,
            random_seed=int(sample_seed.generate_state(1)[0]),
            progressbar=progressbar,
            compute_convergence_checks=False,
            **kwargs,
        )
    if check_convergence and chains > 1:
        report = convergence_report(trace)
        if not report.ok:
            warnings.warn(report.text, stacklevel=2)
    return trace
