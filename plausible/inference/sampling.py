"""``plausible.sample``: the route that fits the model, the storage that fits the memory.

Every route but the last runs the one driver (:mod:`plausible.inference.driver`: seeds,
chains in threads, warm-up and thinning, the DataTree), chosen from what the model builder
declared (:mod:`plausible.inference.declarations`):

* **exact batches** — every free variable is drawn by a declared step whose conditional does
  not depend on the chain's state (Dirichlet and PrIRN; Normal–Inverse-Gamma with fixed or
  empirical-Bayes hyper-parameters): every draw is exact and independent, drawn in blocks by
  an independent kernel (:mod:`plausible.inference.exact`);
* **kernel** — the model declares its sampler as a kernel (:mod:`plausible.inference.kernel`:
  the Dawid–Skene family, hierarchical Dirichlet, easy/hard, censored ratings; Plackett–Luce
  in candidate form);
* **steps** — the declared step methods cover every free variable (annotator-beta, GLAD, Su,
  dense Plackett–Luce): the same step objects ``pm.sample`` would run, as one kernel
  (:mod:`plausible.inference.bridges.from_pymc_steps`), chains started from points dispersed around the
  model's initial point;
* **PyMC** — some free variable has no declared step (hierarchical ratings' hyper-parameters,
  every ``gibbs=False`` or ``compiled=False`` build): ``pm.sample`` with the declared steps
  assigned to their variables and NUTS (or slice, ...) to every other, in one run, chains
  started from dispersed points (PyMC starts chains with custom steps all at the same point).

**Storage** (:mod:`plausible.metrics.storage`): ``storage="auto"`` writes the candidate form
whenever the model has one and it is smaller than the dense plausibilities (many classes, few
named per item), ``"dense"`` or ``"candidate"`` force one. **Memory**: the trace's size is
computed before sampling and compared with the budget (:mod:`plausible.inference.memory`);
exact draws that do not fit are streamed to a Zarr store (``store=``, by default a temporary
directory removed at exit), any other route refuses with a message naming the size and the
options. **What is kept** (``keep=``): a model whose kernel can compute its plausibilities
from the stored parameters (the Dawid–Skene family) stores its per-draw plausibilities only
when asked (``"draws"``) or when they are small (``"auto"``, :data:`KEEP_DRAWS_BYTES`);
otherwise (``"summary"``) the trace holds the parameters, the posterior mean plausibility and
the top-1 shares accumulated while sampling (:mod:`plausible.metrics.accumulated`, what a
per-item table needs), and the per-draw plausibilities and per-item log-likelihood are dask
arrays computed from the parameters when read: 500,000 items x 1000 draws take the 100 MB of
the parameters instead of 10 GB. The result is an ``xarray.DataTree`` (ArviZ 1.x), checked by
:func:`plausible.diagnostics.convergence_report` on the MCMC routes.
"""

import atexit
import functools
import os
import shutil
import tempfile
import uuid
import warnings
from dataclasses import replace
from inspect import signature
from math import prod

import dask.array as da
import numpy as np
import pandas as pd
import pymc as pm
import xarray as xr

from plausible.diagnostics.convergence import (NOT_CONVERGED, REPORT_ATTR, RHAT_MAX, SETTLED,
                                               convergence_report, labelling_row)
from plausible.inference.declarations import declared_gibbs, declared_log_likelihood, declared_sampler
from plausible.inference.exact import CANDIDATE_DTYPE, candidate_form, covers_exactly, sample_exact
from plausible.inference import memory
from plausible.inference.draws import EXACT, PYMC, resolve_draws
from plausible.inference.driver import AUTO, AUTO_FIRST_DRAWS, assemble
from plausible.inference.progress import reporting
from plausible.inference.bridges.from_pymc_steps import jittered, sample_steps
from plausible.metrics.accumulated import GROUP, pooled, split_rhat
from plausible.metrics.storage import NAME, candidate_nbytes

STORAGES = ("auto", "dense", "candidate")
KEEPS = ("auto", "draws", "summary")
KEEP_DRAWS_BYTES = 256 * 10**6
"""``keep="auto"`` stores the per-draw plausibilities of a model that can compute them from
its stored parameters only when they take at most this many bytes (at ``draws="auto"``, for
1000 draws per chain); beyond it they are summarised while sampling and computed when read."""
AUTO_PEAK = 2
"""A ``draws="auto"`` run holds up to twice its stored draws while it extends them (the draws
so far, the new block and their concatenation)."""
AUTO_STORED_SHARE = 4
"""A ``draws="auto"`` run stores at most as many draws as ``1 / AUTO_STORED_SHARE`` of the
memory budget holds, evenly spread over the run
(:func:`plausible.inference.driver.run_until`): twice that while it extends them
(:data:`AUTO_PEAK`), and its convergence report's working copies about as much again."""


def no_variable_fails(values, rhat_max: float = RHAT_MAX, keep: dict | None = None) -> bool:
    """Whether :func:`plausible.diagnostics.convergence_report` finds no variable of
    ``values`` failing: name -> ``(chain, draw, ...)`` draws (a DataArray, or an array whose
    element dims get generic names; a dask array is computed when read, which the report
    assesses a block at a time), and under :data:`~plausible.metrics.accumulated.GROUP` the
    summaries of the plausibilities accumulated while sampling (a Dataset: the report reads
    their split R-hat where it does not recompute their draws). The variables are assessed
    one at a time, the smallest first, and the first that fails ends the check (the
    plausibilities, the costliest, are recomputed only once every parameter passes and their
    split R-hat from the summaries does). When none fails, ``keep["report"]`` (where ``keep``
    is given) is the whole report."""
    values = dict(values)
    summary = values.pop(GROUP, None)
    arrays = {name: v if isinstance(v, xr.DataArray) else
              xr.DataArray(v, dims=("chain", "draw", *(f"{name}_dim_{k}"
                                                       for k in range(v.ndim - 2))))
              for name, v in values.items()}
    lazy = [name for name, v in arrays.items() if hasattr(v.data, "dask")]
    if summary is not None and NAME not in arrays:
        lazy.append(NAME)
    trace = assemble(xr.Dataset(arrays, attrs={"computed_when_read": ",".join(lazy)}))
    if summary is not None:
        trace[GROUP] = xr.DataTree(summary)
    names = sorted(arrays, key=lambda name: arrays[name].size) + (
        [NAME] if NAME not in arrays and summary is not None else [])
    if NAME in lazy and summary is not None and NAME in arrays:  # their cheap split R-hat first
        mean, rhat = pooled(summary, "mean"), split_rhat(summary)
        open_ = (mean > SETTLED) & (mean < 1 - SETTLED)  # the settled are not asked (report)
        if rhat is not None and bool((rhat.where(open_) > rhat_max).any()):
            return False
    reports = []
    for name in names:  # one variable, or the summarised plausibilities with the rest
        report = convergence_report(trace, [name] if name in arrays else None,
                                    rhat_max=rhat_max)
        row = report.table.loc[[name]]
        if (row["status"] == NOT_CONVERGED).any():
            return False
        reports.append(replace(report, table=row))
    labelling = pd.DataFrame.from_dict(labelling_row(trace), orient="index")
    if not labelling.empty and (labelling["status"] == NOT_CONVERGED).any():
        return False
    if keep is not None and reports:
        modes = [r.modes for r in reports if r.modes is not None]
        keep["report"] = replace(reports[0], table=pd.concat([*(r.table for r in reports),
                                                              labelling]),
                                 modes=modes[0] if modes else None)
    return True


def dispersed_initvals(model: pm.Model, chains: int, rng: np.random.Generator, scale: float):
    """One initial point per chain: the model's initial point jittered
    (:func:`~plausible.inference.bridges.from_pymc_steps.jittered`), mapped back to the constrained
    space."""
    initial = model.initial_point()
    free = model.free_RVs
    to_constrained = model.compile_fn(
        outs=model.replace_rvs_by_values(free),
        inputs=model.value_vars,
        point_fn=True,
        on_unused_input="ignore",
    )
    starts = (to_constrained(jittered(initial, rng, scale)) for _ in range(chains))
    return [{rv.name: value for rv, value in zip(free, start)} for start in starts]


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _values_per_draw(model: pm.Model) -> int:
    """Values one draw of the posterior holds (free variables and deterministics)."""
    shapes = model.eval_rv_shapes()
    names = [rv.name for rv in (*model.free_RVs, *model.deterministics)]
    return sum(prod(shapes[name]) if name in shapes else
               prod(model[name].shape.eval()) for name in names)


def _too_large(what: str, size: int, budget: int, options: str) -> memory.MemoryBudgetError:
    return memory.MemoryBudgetError(
        f"{what} would take {memory.format_bytes(size)}, more than the memory budget of "
        f"{memory.format_bytes(budget)}; {options}, or raise memory_budget= (bytes)")


def _temporary_store() -> str:
    path = tempfile.mkdtemp(prefix="plausible-trace-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return os.path.join(path, "trace.zarr")


def sample(
    model: pm.Model,
    draws: int | str = 1000,
    *,
    tune: int | None = None,
    chains: int = 4,
    seed: int | None = None,
    cores: int | None = None,
    storage: str = "auto",
    keep: str = "auto",
    memory_budget: float | None = None,
    store=None,
    dispersion: float = 2.0,
    progressbar: bool = True,
    check_convergence: bool = True,
    log_likelihood: bool = True,
    max_seconds: float | None = None,
    max_draws: int | None = None,
    **kwargs,
) -> xr.DataTree:
    """Sample ``model`` and return its trace as an ``xarray.DataTree``.

    Parameters
    ----------
    draws, chains
        Kept draws per chain and number of chains (``>= 1`` each), as
        :func:`~plausible.inference.draws.resolve_draws` reads them. ``draws="auto"``: the
        chains are extended in blocks (250 draws per chain, then doubling the run) until
        every variable converges — R-hat <= 1.01, bulk and tail ESS >= 100 per chain, as
        :func:`plausible.diagnostics.convergence_report` measures it; plausibilities kept
        only as summaries (``keep``), split R-hat <= 1.01 from their moments — or
        ``max_seconds`` pass or ``max_draws`` per chain are drawn (or the memory budget is reached); the
        posterior's ``draws_stopped_by`` attribute says which. Needs at least 2 chains; exact
        independent draws take 1000 (nothing to converge; ``draws_stopped_by`` is ``"exact
        draws"``); a model sampled by ``pm.sample`` (NUTS) needs a number.
    tune
        Warm-up iterations of the MCMC routes; by default, when the model's declared steps
        cover every free variable, the most any of them asks for (``default_tune_steps``;
        slice steps tune their widths), 1000 with NUTS, and the compiled sampler's own
        default. Exact draws need none.
    seed
        Makes the whole run reproducible: same seed, same draws.
    cores
        Threads of the driver's routes (default ``min(chains, CPUs)``; the draws do not
        depend on it) or processes of the PyMC route (default 1, chains one after another,
        which for vectorised Gibbs steps is usually as fast and needs no pickling).
    storage : {"auto", "dense", "candidate"}
        Plausibility storage (see the module docstring).
    keep : {"auto", "draws", "summary"}
        For a model that can compute its plausibilities from its stored parameters: store
        them per draw (``"draws"``), or summarise them while sampling and compute them when
        read (``"summary"``), or store them when they take at most :data:`KEEP_DRAWS_BYTES`
        (``"auto"``); see the module docstring. Other models store their draws.
    memory_budget
        Bytes the trace may take (default a fixed
        :data:`~plausible.inference.memory.DEFAULT_BUDGET`); a trace that would not fit is
        refused before sampling, and a ``draws="auto"`` run stores at most as many draws as
        fit it, evenly spread over the run (the rest reach the per-item summaries).
    store
        Path of a Zarr store for exact draws: the posterior is written there block by block
        and opened lazily (also chosen, in a temporary directory, when the draws exceed the
        budget).
    dispersion
        Half-width of the uniform jitter of chain starts in the transformed space (steps and
        PyMC routes).
    progressbar
        Show the sweeps on a progress bar while sampling, on a terminal only (PyMC's own bar
        on its route).
    check_convergence
        Warn with :func:`plausible.diagnostics.convergence_report`'s text when a variable of
        an MCMC trace fails the R-hat / ESS thresholds (exact draws need no check).
    max_seconds, max_draws
        Limits of a ``draws="auto"`` run (none on time;
        :data:`~plausible.inference.draws.AUTO_MAX_DRAWS` per chain by default;
        the draws stored are capped by the memory budget instead, see ``memory_budget``).
    log_likelihood
        Write the ``log_likelihood`` group (per item, ``(chain, draw, item)``) and the
        annotations in ``observed_data`` from the model's declaration
        (:func:`add_log_likelihood`), for ``az.loo`` / ``az.compare``.
    **kwargs
        Passed to the model's kernel (e.g. ``thin``; ``init=`` an earlier trace of the
        Dawid–Skene family on a subset of the labels, a warm start) or to ``pm.sample``
        (e.g. ``target_accept`` for NUTS).

    Raises
    ------
    ValueError
        For invalid arguments; :class:`~plausible.inference.memory.MemoryBudgetError` (a
        ValueError) when the trace cannot fit the budget, before any sampling.
    """
    draws, max_draws = resolve_draws(draws, max_draws=max_draws)
    auto = draws == AUTO
    chains = _count("chains", chains, 1)
    if auto and chains < 2:
        raise ValueError("draws='auto' needs at least 2 chains: R-hat compares chains")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds must be > 0, got {max_seconds!r}")
    if tune is not None:
        tune = _count("tune", tune, 0)
    if cores is not None:
        cores = _count("cores", cores, 1)
    if storage not in STORAGES:
        raise ValueError(f"storage must be one of {STORAGES}, got {storage!r}")
    if keep not in KEEPS:
        raise ValueError(f"keep must be one of {KEEPS}, got {keep!r}")
    budget = memory.memory_budget(memory_budget)
    with reporting(progressbar):  # the sweeps of every driver route below, on a terminal
        sampler = declared_sampler(model)
        compiled = sampler is not None and storage in ("auto", sampler.form)
        if "init" in kwargs and not (compiled and "init" in signature(sampler.sampler).parameters):
            raise ValueError("init= (a warm start from an earlier run) needs a model whose "
                             "compiled sampler resumes chains (the Dawid-Skene family)")
        if keep == "summary" and (not compiled or sampler.lazy_nbytes_per_draw is None):
            raise ValueError("keep='summary' needs a model whose sampler computes its "
                             "plausibilities from the stored parameters (the Dawid-Skene "
                             "family); this one stores its draws: use keep='auto' or 'draws'")
        # the declared steps compile their functions: only for the routes that run them
        steps = [] if compiled else [declaration.instantiate(model)
                                     for declaration in declared_gibbs(model)]
        checked: dict = {}  # the report of a check that passed: the run's last
        limits = ({"until": functools.partial(no_variable_fails, keep=checked),
                   "max_seconds": max_seconds} if auto else {})
        if compiled:
            trace = _sample_compiled(model, sampler, draws, tune, chains, seed, cores, budget,
                                     {**kwargs, **limits}, max_draws, keep)
        elif covers_exactly(model, steps):
            draws, _ = resolve_draws(draws, route=EXACT)  # nothing to converge
            trace = _sample_exact(model, steps, draws, chains, seed, cores, storage, budget, store)
            if auto:
                trace["posterior"].attrs["draws_stopped_by"] = "exact draws"
            return _with_log_likelihood(trace, model, log_likelihood, budget)
        else:
            if storage == "candidate":
                raise ValueError("this model has no candidate storage; use storage='dense' (or "
                                 "'auto')")
            per_draw = chains * _values_per_draw(model) * 8
            if {var for step in steps for var in step.vars} == set(model.value_vars):
                if auto:
                    limits.update(max_draws=max_draws,
                                  max_stored=max(1, budget // (AUTO_STORED_SHARE * per_draw)))
                else:
                    _check_fits(per_draw * draws, chains, draws, budget)
                if tune is None:
                    tune = max((step.default_tune_steps or 0 for step in steps), default=0)
                trace = sample_steps(model, declared_gibbs(model), draws=draws, chains=chains,
                                     seed=seed, tune=tune, cores=cores, dispersion=dispersion,
                                     **limits, **kwargs)
            else:  # PyMC holds the draws, then copies them into the DataTree
                resolve_draws(draws, route=PYMC)  # "auto": AutoDrawsUnavailable
                _check_fits(2 * per_draw * draws, chains, draws, budget)
                trace = _sample_pymc(model, steps, draws, tune, chains, seed, cores or 1,
                                     dispersion, progressbar, kwargs)
        if checked and trace["posterior"].attrs.get("draws_stopped_by") == "converged":
            trace["posterior"].attrs[REPORT_ATTR] = checked["report"].to_json()
        if check_convergence and chains > 1:
            report = convergence_report(trace)
            if not report.ok:
                stopped = trace["posterior"].attrs.get("draws_stopped_by")
                reason = {"max_seconds": f" (draws='auto' stopped at max_seconds={max_seconds})",
                          "max_draws": " (draws='auto' stopped at the most draws allowed: "
                                       "max_draws or the memory budget)"}.get(stopped, "")
                warnings.warn(report.text + reason, stacklevel=2)
        return _with_log_likelihood(trace, model, log_likelihood, budget)


def _with_log_likelihood(trace, model, wanted: bool, budget: int):
    if wanted and declared_log_likelihood(model) is not None:
        return add_log_likelihood(trace, model, budget=budget)
    return trace


def add_log_likelihood(trace: xr.DataTree, model: pm.Model, *, budget: int | None = None
                       ) -> xr.DataTree:
    """Write ``log_likelihood/<name> (chain, draw, item or rating)`` and
    ``observed_data/<name>`` into ``trace`` (in place; returned) from the model's
    :func:`declare_log_likelihood`.

    The pointwise values take ``chains x draws x points`` float64; when the trace's
    plausibilities are computed when read (``keep="summary"``), or the values would exceed
    :data:`EAGER_LOG_LIKELIHOOD` bytes, so are they (a dask array, :func:`lazy_pointwise`:
    held only while read, as ``az.loo`` or a save does); otherwise, when they exceed
    ``budget`` (bytes; default the memory budget), nothing is written and a warning says so.
    A model that declares none raises ``ValueError``.
    """
    declaration = declared_log_likelihood(model)
    if declaration is None:
        raise ValueError("this model declares no per-item log-likelihood")
    posterior = trace["posterior"]
    points = (len(model.coords["item"]) if declaration.dim == "item"
              else declaration.observed.sizes[declaration.dim])
    size = 8 * prod(posterior.sizes[d] for d in ("chain", "draw")) * points
    budget = memory.memory_budget(None) if budget is None else budget
    lazy = (NAME in posterior.attrs.get("computed_when_read", "").split(",")
            or size > EAGER_LOG_LIKELIHOOD)
    if size > budget and not lazy:
        warnings.warn(f"the per-item log-likelihood would take {memory.format_bytes(size)}, more "
                      f"than the memory budget of {memory.format_bytes(budget)}: not written "
                      "(az.loo needs it; use shards of items or fewer draws)", stacklevel=3)
        return trace
    pointwise = lazy_pointwise(declaration, trace, points) if lazy else declaration.pointwise(trace)
    trace["log_likelihood"] = xr.DataTree(xr.Dataset({declaration.name: pointwise}))
    if declaration.observed is not None:
        observed = (trace["observed_data"].to_dataset() if "observed_data" in trace.children
                    else xr.Dataset())
        trace["observed_data"] = xr.DataTree(observed.assign({declaration.name: declaration.observed}))
    return trace


EAGER_LOG_LIKELIHOOD = 512 * 10**6
"""Bytes of pointwise log-likelihood above which it is computed when read, whatever the
memory budget: most runs never read it (it is for LOO), and a held copy would be the run's
largest array (4 chains x 1000 draws x 60,000 comparisons take 1.9 GB)."""

LOG_LIKELIHOOD_BLOCK = 64 * 10**6
"""Bytes of one block of a log-likelihood computed when read (:func:`lazy_pointwise`)."""


def lazy_pointwise(declaration, trace: xr.DataTree, points: int) -> xr.DataArray:
    """The declared pointwise log-likelihood of ``trace`` as a dask array ``(chain, draw,
    point)``, each block (one chain, as many draws as fit :data:`LOG_LIKELIHOOD_BLOCK`)
    computed from the block's draws of the stored parameters when read."""
    posterior = trace["posterior"]
    chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
    template = declaration.pointwise(trace.isel(chain=[0], draw=[0], missing_dims="ignore"))
    dims = ("chain", "draw", *(d for d in template.dims if d not in ("chain", "draw")))
    template = template.transpose(*dims)
    step = max(1, min(draws, LOG_LIKELIHOOD_BLOCK // (8 * points)))

    def block(block_info=None):
        (c0, c1), (d0, d1), *_ = block_info[None]["array-location"]
        part = trace.isel(chain=slice(c0, c1), draw=slice(d0, d1), missing_dims="ignore")
        return np.asarray(declaration.pointwise(part).transpose(*dims).values, dtype=np.float64)

    chunks = ((1,) * chains, tuple(min(step, draws - d) for d in range(0, draws, step)),
              *((n,) for n in template.shape[2:]))
    values = da.map_blocks(block, chunks=chunks, dtype=np.float64,  # named: not hashed
                           meta=np.empty((0,) * len(dims), dtype=np.float64),
                           name=f"log-likelihood-{uuid.uuid4().hex}")
    coords = {name: coord for name, coord in template.coords.items()
              if not set(coord.dims) & {"chain", "draw"}}
    return xr.DataArray(values, dims=dims, coords={"chain": posterior["chain"].values,
                                                   "draw": posterior["draw"].values, **coords})


def _sample_exact(model, steps, draws, chains, seed, cores, storage, budget, store):
    form = candidate_form(steps) if storage != "dense" else None
    if storage == "candidate" and form is None:
        raise ValueError("this model has no candidate storage: its unannotated classes are not "
                         "exchangeable (their prior concentrations differ); use storage='dense'")
    n_samples = chains * draws
    n_items, n_classes = len(model.coords.get("item", ())), len(model.coords.get("class", ()))
    dense_size = n_samples * _values_per_draw(model) * 8
    if form is not None:
        if storage == "auto" and form.width + 1 >= n_classes:  # no fewer values per draw
            form = None
        else:
            candidate_size = candidate_nbytes(n_samples, n_items, form.width,
                                              np.dtype(CANDIDATE_DTYPE).itemsize)
    size = dense_size if form is None else candidate_size
    block_draws = None
    if store is not None or size > budget:
        per_draw = max(size // draws, 1)
        block_draws = max(1, min(draws, budget // (2 * per_draw)))
        if store is None:
            store = _temporary_store()
            warnings.warn(f"{draws} exact draws of {chains} chains would take {memory.format_bytes(size)}, "
                          f"more than the memory budget of {memory.format_bytes(budget)}: streamed to "
                          f"the Zarr store {store} (removed at exit; pass store= to keep it)",
                          stacklevel=3)
    return sample_exact(model, steps, draws=draws, chains=chains, seed=seed, form=form,
                        cores=cores or min(chains, _cpus()), block_draws=block_draws, store=store)


def _sample_compiled(model, sampler, draws, tune, chains, seed, cores, budget, kwargs,
                     max_draws, keep):
    options = {**sampler.kwargs, **kwargs}
    if tune is not None:
        options["tune"] = tune
    lazy = _computed_when_read(sampler, keep, chains * (
        min(max_draws, 4 * AUTO_FIRST_DRAWS) if draws == AUTO else draws), budget)
    per_draw = chains * (sampler.lazy_nbytes_per_draw if lazy else sampler.nbytes_per_draw)
    if lazy:
        options["lazy"] = True
    if draws == AUTO:
        options.update(max_draws=max_draws,
                       max_stored=max(1, budget // (AUTO_STORED_SHARE * per_draw)))
    elif draws * per_draw > budget:
        raise _too_large(f"{chains} chains x {draws} draws of this model", draws * per_draw,
                         budget, "use fewer draws or chains, thin=, "
                         + ("keep='summary', " if not lazy and sampler.lazy_nbytes_per_draw
                            is not None else "")
                         + "or shards of items (plausible.distributed)")
    return sampler.sampler(draws=draws, chains=chains, seed=seed, cores=cores, **options)


def _computed_when_read(sampler, keep: str, samples: int, budget: int) -> bool:
    """Whether a compiled run of ``samples`` draws (all chains) computes its plausibilities
    when read: ``keep="summary"``, or ``"auto"`` when they would take more than
    :data:`KEEP_DRAWS_BYTES` or twice the trace more than ``budget`` (a ``draws="auto"`` run
    holds up to twice its draws while extending them)."""
    if sampler.lazy_nbytes_per_draw is None or keep == "draws":
        return False
    plausibilities = samples * (sampler.nbytes_per_draw - sampler.lazy_nbytes_per_draw)
    return (keep == "summary" or plausibilities > KEEP_DRAWS_BYTES
            or AUTO_PEAK * samples * sampler.nbytes_per_draw > budget)


def _check_fits(size: int, chains: int, draws: int, budget: int) -> None:
    if size > budget:
        raise _too_large(f"{chains} chains x {draws} draws of this model", size, budget,
                         "use fewer draws or chains, or shards of items (plausible.distributed)")


def _sample_pymc(model, steps, draws, tune, chains, seed, cores, dispersion, progressbar, kwargs):
    if tune is None:
        tune = 1000
    init_seed, sample_seed = np.random.SeedSequence(seed).spawn(2)
    initvals = dispersed_initvals(model, chains, np.random.default_rng(init_seed), dispersion)
    with model:
        return pm.sample(
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
