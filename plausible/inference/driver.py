"""The one driver: chains of a kernel (:mod:`plausible.inference.kernel`) into a trace.

What every sampler needs and no kernel re-solves:

* **seeds** — chain ``c`` draws every random number from its own generator, child ``c`` of
  ``numpy.random.SeedSequence(seed).spawn(chains)``, so the draws depend on the seed only,
  never on the number of threads;
* **chains in threads** — the kernels release the GIL (:func:`plausible.inference.chains.run_chains`);
* **warm-up and thinning** — ``tune`` sweeps are discarded, then every ``thin``-th sweep is
  kept (:class:`Chains`, the package's one such loop); independent kernels (exact
  draws) have neither;
* **preallocated draws** — ``(chain, draw, ...)`` arrays of every recorded variable, written
  in place by the kept sweeps, all at once or a block of draws at a time (each chain's state
  and generator carried from block to block, for traces streamed to disk);
* **the DataTree** — :func:`assemble`, the package's one assembly of a trace's groups
  (``posterior``, ``sample_stats``, ``log_likelihood``, ``constant_data``,
  ``observed_data``; the models' ``log_likelihood`` is added to a trace by
  :func:`plausible.inference.sampling.add_log_likelihood`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import xarray as xr

from plausible.inference.chains import available_cores, run_chains
from plausible.inference.kernel import Kernel
from plausible.inference.progress import EVERY as progress_every
from plausible.inference.progress import current as current_progress
from plausible.metrics.accumulated import GROUP, Accumulator
from plausible.metrics.storage import CLASS, ITEM, NAME


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class Chains:
    """``chains`` chains of ``kernel``, run a block of kept draws at a time (:meth:`draw`),
    each keeping its generator and state between blocks, so the draws do not depend on how
    a run is cut into blocks.

    A chain's first block starts with ``tune`` warm-up sweeps (default the kernel's); then
    every ``thin``-th sweep (default the kernel's) is kept. An independent kernel
    (``independent = True``: every draw exact, whatever the state) has neither: one sweep
    writes a chain's whole block. Chain ``c`` draws every random number from child ``c`` of
    ``SeedSequence(seed)``; ``cores``: threads (default ``min(chains, CPUs)``, at most the
    kernel's ``max_threads`` where it sets one); the draws do not depend on it. ``skip``:
    variables not recorded. ``accumulate``: ``{name: accumulator}`` for skipped variables
    whose kept draws are still written by the sweep, each into a per-chain buffer, and
    folded into ``accumulator.add(chain, value)`` (e.g.
    :class:`plausible.metrics.accumulated.Accumulator`) instead of being stored, with
    ``accumulator.split(chain)`` before the draw that begins the chain's second half (of the
    draws so far; a block cut short by ``max_draws`` leaves the earlier split). A kernel that
    summarises its own kept draws reads the same, set before each block as
    ``kernel.split_at``: the index of that draw, or None. ``resume``:
    one ``{name: value}`` per chain, from which ``kernel.resume`` starts that chain instead
    of ``kernel.start`` (a warm start from an earlier run's final states). :meth:`finish` gives the per-chain statistics, :meth:`close`
    releases what the chains hold (also on leaving a ``with`` block)."""

    def __init__(self, kernel: Kernel, *, chains: int, seed=None, tune: int | None = None,
                 thin: int | None = None, cores: int | None = None, skip=(),
                 accumulate: Mapping | None = None, resume=None):
        self.kernel, self.n_chains = kernel, _positive("chains", chains)
        if resume is not None and (len(resume) != chains or not kernel.resumes):
            raise ValueError(f"resume needs a kernel that resumes ({kernel.name} "
                             f"{'does' if kernel.resumes else 'does not'}) and one "
                             f"state per chain ({chains}), got {len(resume)}")
        self.resume = resume
        self.tune = kernel.default_tune if tune is None else int(tune)
        if self.tune < 0:
            raise ValueError(f"tune must be a whole number >= 0, got {tune!r}")
        self.thin = _positive("thin", kernel.default_thin if thin is None else thin)
        self.recorded = {name: v for name, v in {**kernel.variables, **kernel.stats}.items()
                         if name not in skip}
        self.accumulate = dict(accumulate or {})
        unknown = set(self.accumulate) - (set(skip) & set(kernel.variables))
        if unknown:
            raise ValueError(f"only skipped variables of the kernel are accumulated: {sorted(unknown)}")
        if self.accumulate and kernel.independent:
            raise ValueError("an independent kernel writes a block of draws per sweep: nothing "
                             "to accumulate draw by draw")
        self.buffers = {name: np.zeros((chains, *kernel.variables[name].shape),
                                       dtype=kernel.variables[name].dtype)
                        for name in self.accumulate}
        self.rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(chains)]
        self.states: list = [None] * chains
        self.started = [False] * chains
        self.kept = 0
        self.threads = min(chains, available_cores() if cores is None else _positive("cores", cores),
                           kernel.max_threads or chains)

    def _sweeps(self, n: int) -> int:
        """Sweeps of one chain for its next ``n`` kept draws."""
        if self.kernel.independent:
            return 1
        return self.tune * (self.kept == 0) + n * self.thin

    def _split_at(self, n: int) -> int | None:
        """The index of a chain's draw that begins its second half once this block of ``n``
        draws is drawn (None when it lies in an earlier block: a block cut short by
        ``max_draws``)."""
        half = (self.kept + n) // 2
        return half if half >= self.kept else None

    def _chain(self, c, n, values, *, stop, progress=None):
        kernel, rng = self.kernel, self.rngs[c]
        if not self.started[c]:
            self.states[c] = (kernel.start(rng) if self.resume is None
                              else kernel.resume(self.resume[c], rng))
            self.started[c] = True
        if kernel.independent:
            self.states[c] = kernel.sweep(rng, self.states[c],
                                          {name: a[c] for name, a in values.items()})
            if progress is not None:
                progress.advance(1)
            return
        warm_up = self.kept == 0  # only the first block starts with the warm-up sweeps
        tune, thin, state = self.tune, self.thin, self.states[c]
        split_at = self._split_at(n)
        reported = 0
        for t in range(sweeps := tune * warm_up + n * thin):
            if stop.is_set():
                return
            kept = t - tune * warm_up
            if kept >= 0 and (kept + 1) % thin == 0:
                d = kept // thin
                state = kernel.sweep(rng, state, {
                    **{name: a[c, d, ...] for name, a in values.items()},
                    **{name: buffer[c] for name, buffer in self.buffers.items()}})
                for name, accumulator in self.accumulate.items():
                    if self.kept + d == split_at:  # the second half begins with this draw
                        accumulator.split(c)
                    accumulator.add(c, self.buffers[name][c])
            else:
                state = kernel.sweep(rng, state, None)
            if progress is not None and ((t + 1) % progress_every == 0 or t + 1 == sweeps):
                progress.advance(t + 1 - reported)
                reported = t + 1
        self.states[c] = state

    def draw(self, n: int) -> dict[str, np.ndarray]:
        """The next ``n`` kept draws of every chain: ``{name: (chain, n, *shape)}`` (their
        sweeps counted on the progress bar of an enclosing
        :func:`plausible.inference.progress.reporting` block)."""
        n = _positive("draws", n)
        values = {name: np.zeros((self.n_chains, n, *v.shape), dtype=v.dtype)
                  for name, v in self.recorded.items()}
        progress = current_progress()
        if progress is not None:
            progress.add(self.n_chains * self._sweeps(n))
        self.kernel.split_at = self._split_at(n)
        run_chains(lambda c, *, stop: self._chain(c, n, values, stop=stop, progress=progress),
                   [(c,) for c in range(self.n_chains)], self.threads)
        self.kept += n
        return values

    def finish(self) -> dict[str, np.ndarray]:
        """``{name: (chain, *shape)}``: the kernel's per-chain statistics (``chain_stats``,
        written by ``kernel.finish(state, out)``) after the draws so far."""
        stats = self.kernel.chain_stats
        values = {name: np.zeros((self.n_chains, *v.shape), dtype=v.dtype)
                  for name, v in stats.items()}
        for c in range(self.n_chains if stats else 0):
            self.kernel.finish(self.states[c], {name: values[name][c, ...] for name in stats})
        return values

    def close(self) -> None:
        for c in range(self.n_chains):
            if self.started[c]:
                self.kernel.close(self.states[c])
                self.started[c] = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def kernel_blocks(kernel: Kernel, *, draws: int, chains: int, seed=None, tune: int | None = None,
                  thin: int | None = None, cores: int | None = None, skip=(),
                  block_draws: int | None = None, accumulate: Mapping | None = None,
                  resume=None) -> Iterator[tuple[slice, dict[str, np.ndarray]]]:
    """``draws`` kept draws of :class:`Chains` of ``kernel``, a block at a time:
    ``(draws_slice, {name: (chain, block, *shape)})`` for every variable and statistic of the
    kernel except those in ``skip``, ``block_draws`` per block (all by default); the last
    block also holds the per-chain statistics (``{name: (chain, *shape)}``). ``accumulate``,
    ``resume``: as :class:`Chains`."""
    draws = _positive("draws", draws)
    block_draws = draws if block_draws is None else min(_positive("block_draws", block_draws), draws)
    with Chains(kernel, chains=chains, seed=seed, tune=tune, thin=thin, cores=cores,
                skip=skip, accumulate=accumulate, resume=resume) as run:
        for first in range(0, draws, block_draws):
            n = min(block_draws, draws - first)
            values = run.draw(n)
            if first + n == draws:
                values.update(run.finish())
            yield slice(first, first + n), values


def run_kernel(kernel: Kernel, *, draws: int, chains: int, seed=None, tune: int | None = None,
               thin: int | None = None, cores: int | None = None, skip=(),
               accumulate: Mapping | None = None, resume=None) -> dict[str, np.ndarray]:
    """All the draws of :func:`kernel_blocks` in one block: ``{name: (chain, draw, *shape)}``
    for every variable and statistic of the kernel except those in ``skip``, and ``{name:
    (chain, *shape)}`` for its per-chain statistics."""
    [(_, values)] = kernel_blocks(kernel, draws=draws, chains=chains, seed=seed, tune=tune,
                                  thin=thin, cores=cores, skip=skip, accumulate=accumulate,
                                  resume=resume)
    return values


AUTO = "auto"
"""``draws="auto"``: extend the chains until they converge (:func:`run_until`)."""
AUTO_FIRST_DRAWS = 250
"""Kept draws per chain of the first block of an ``"auto"`` run; each later block doubles
the run (so the run is at most about twice as long as it needed to be, with a check after
each block)."""


def run_until(kernel: Kernel, *, chains: int, until, seed=None, tune: int | None = None,
              thin: int | None = None, cores: int | None = None, skip=(),
              max_seconds: float | None = None, max_draws: int | None = None,
              max_stored: int | None = None, first_draws: int = AUTO_FIRST_DRAWS,
              accumulate: Mapping | None = None, resume=None
              ) -> tuple[dict[str, np.ndarray], str, dict]:
    """Run :class:`Chains` of ``kernel`` in blocks (``first_draws`` kept draws per chain, then
    as many sweeps again as run so far) until ``until(values)`` is true (``values``: the
    kernel's recorded variables so far, ``(chain, draw, ...)`` arrays, those it computes when
    read from them (dask arrays), and the accumulated summaries so far under
    :data:`~plausible.metrics.accumulated.GROUP`, a Dataset), ``max_seconds`` have passed
    (checked after each block) or the sweeps of ``max_draws`` draws at the starting ``thin``
    are run (the last block then has no check: the caller reads the run's report).

    ``max_stored``: the most draws per chain kept. Before a block that would pass it, the
    draws kept so far are thinned by the smallest whole factor ``m >= 2`` that fits them to
    the end of the block, or to the end of ``max_draws``' sweeps when the block after it
    would reach that (blocks double): every ``m``-th is kept, counted back from the last, so
    that those left are evenly spaced, and the chains keep every ``m``-th sweep they kept
    before (``thin`` times ``m``) for the rest of the run. The draws stay evenly spread over
    the whole run, the memory they take stays bounded, and the sweeps between them cost less
    (none is recorded or summarised). A run is thinned only once it needs to be, so one that
    converges early is checked, and stops, after as few sweeps as it needs; one that spends
    its budget keeps about ``max_stored`` draws, as if thinned from the start. Returns the
    draws (with the per-chain statistics, as :func:`run_kernel`), what stopped the run
    (``"converged"``, ``"max_seconds"`` or ``"max_draws"``) and ``{"thin": the sweeps
    between kept draws, "sweeps_run": the sweeps per chain after warm-up}``.
    ``accumulate``, ``resume``: as :class:`Chains`."""
    if max_draws is not None:
        max_draws = _positive("max_draws", max_draws)
    if max_stored is not None:
        max_stored = max(2, _positive("max_stored", max_stored))
    start = time.perf_counter()
    values: dict[str, np.ndarray] = {}
    with Chains(kernel, chains=chains, seed=seed, tune=tune, thin=thin, cores=cores,
                skip=skip, accumulate=accumulate, resume=resume) as run:
        budget = None if max_draws is None else max_draws * run.thin  # sweeps after warm-up
        swept, kept = 0, 0  # sweeps after warm-up, and draws kept, per chain
        n = _positive("first_draws", first_draws)
        while True:
            if budget is not None:
                n = min(n, (budget - swept) // run.thin)
            if max_stored is not None and kept + n > max_stored and kept >= 2:
                end = swept + n * run.thin
                if budget is not None and 2 * end >= budget:  # the next block ends the run
                    end = budget
                m = max(2, -(-end // (max_stored * run.thin)))
                values = {name: v[:, (kept - 1) % m::m] for name, v in values.items()}
                kept, n, run.thin = values[next(iter(values))].shape[1], n // m, run.thin * m
            block = run.draw(max(n, 1))
            swept += max(n, 1) * run.thin
            kept += max(n, 1)
            values = {name: np.concatenate([values[name], new], axis=1) if values else new
                      for name, new in block.items()}
            visible = {name: values[name] for name in kernel.variables if name in values}
            if skip:  # what the kernel computes when read, from the kept draws
                visible.update(kernel.compute_when_read(values))
            if run.accumulate:
                visible[GROUP] = xr.merge([accumulator.dataset()
                                           for accumulator in run.accumulate.values()])
            spent = budget is not None and swept + run.thin > budget
            if spent:  # no check: the run ends here, and its report is read afterwards
                stopped = "max_draws"
            elif until(visible):
                stopped = "converged"
            elif max_seconds is not None and time.perf_counter() - start >= max_seconds:
                stopped = "max_seconds"
            else:
                n = 2 * (swept // (2 * run.thin))  # as many sweeps again, an even number of draws
                continue
            return ({**values, **run.finish()}, stopped,
                    {"thin": int(run.thin), "sweeps_run": int(swept)})


def run_draws(kernel: Kernel, *, draws: int | str, chains: int, seed=None,
              tune: int | None = None, thin: int | None = None, cores: int | None = None,
              skip=(), until: Callable | None = None, max_seconds: float | None = None,
              max_draws: int | None = None, max_stored: int | None = None,
              accumulate: Mapping | None = None, resume=None) -> tuple[dict[str, np.ndarray], dict]:
    """``draws`` kept draws of every chain (:func:`run_kernel`), or, with ``draws="auto"``, as
    many as :func:`run_until` runs with ``until``, ``max_seconds``, ``max_draws`` and
    ``max_stored``. Returns the draws and the attributes a posterior records of the run:
    ``sampling_seconds`` (the sweeps' wall time), ``thin`` (the sweeps between kept draws)
    and, for ``"auto"``, ``draws_stopped_by`` and ``sweeps_run`` (per chain, after warm-up).
    ``accumulate``, ``resume``: as :class:`Chains`."""
    start = time.perf_counter()
    thin = kernel.default_thin if thin is None else thin
    if draws != AUTO:
        values = run_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune,
                            thin=thin, cores=cores, skip=skip, accumulate=accumulate,
                            resume=resume)
        return values, {"sampling_seconds": time.perf_counter() - start, "thin": int(thin)}
    if until is None:
        raise ValueError("draws='auto' needs until= (when the chains have converged)")
    values, stopped_by, spacing = run_until(
        kernel, chains=chains, until=until, seed=seed, tune=tune, thin=thin, cores=cores,
        skip=skip, max_seconds=max_seconds, max_draws=max_draws, max_stored=max_stored,
        accumulate=accumulate, resume=resume)
    return values, {"sampling_seconds": time.perf_counter() - start,
                    "draws_stopped_by": stopped_by, **spacing}


def assemble(posterior: xr.Dataset, *, sample_stats: xr.Dataset | None = None,
             log_likelihood: xr.Dataset | None = None,
             constant_data: xr.Dataset | Mapping | None = None,
             observed_data: xr.Dataset | None = None) -> xr.DataTree:
    """The trace: ``posterior`` (``chain, draw`` first), with ``sample_stats`` (by default
    the posterior's ``chain`` and ``draw`` and no variable), ``log_likelihood``,
    ``constant_data`` and ``observed_data`` where given."""
    if sample_stats is None:
        sample_stats = xr.Dataset(coords={dim: posterior[dim] for dim in ("chain", "draw")})
    groups = {"posterior": posterior, "sample_stats": sample_stats}
    if log_likelihood is not None:
        groups["log_likelihood"] = log_likelihood
    if constant_data is not None:
        groups["constant_data"] = (constant_data if isinstance(constant_data, xr.Dataset)
                                   else xr.Dataset(dict(constant_data)))
    if observed_data is not None:
        groups["observed_data"] = observed_data
    return xr.DataTree.from_dict(groups)


def _named_check(until, variables: Mapping, coords: Mapping, values: Mapping):
    """``until(values)`` with each variable's draws a DataArray ``(chain, draw, *dims)``
    named as :func:`sample_kernel`'s trace names them (the accumulated summaries, under
    :data:`~plausible.metrics.accumulated.GROUP`, as they are)."""
    named = {}
    for name, value in values.items():
        if name == GROUP:
            named[name] = value.assign_coords({d: c for d, c in coords.items()
                                               if d in value.dims})
            continue
        dims = ("chain", "draw", *variables[name].dims)
        named[name] = xr.DataArray(value, dims=dims, coords={d: coords[d] for d in dims[2:]
                                                             if d in coords})
    return until(named)


def sample_kernel(kernel: Kernel, *, draws: int | str = 1000, chains: int = 4, seed=None,
                  tune: int | None = None, thin: int | None = None, cores: int | None = None,
                  coords: Mapping | None = None,
                  constant_data: xr.Dataset | Mapping | None = None, lazy: bool = False,
                  attrs: Mapping | None = None, until: Callable | None = None,
                  max_seconds: float | None = None, max_draws: int | None = None,
                  max_stored: int | None = None, resume=None) -> xr.DataTree:
    """Sample ``kernel`` (:func:`run_kernel`) into a trace (:func:`assemble`): ``posterior``
    with the kernel's variables (dims as declared, ``coords`` for them), ``sample_stats``
    with its statistics (per-chain ones with dims ``(chain, ...)``), ``constant_data`` from
    ``constant_data``; ``attrs`` added to the posterior's, with ``sampling_seconds`` (the
    wall time of the sweeps). ``lazy``: the variables
    the kernel can compute from the stored ones (``lazy_variables``) are not stored but
    computed when read, named in the posterior's ``computed_when_read`` attribute (comma-separated;
    empty when all are stored); a plausibility computed when read is still summarised draw by
    draw while sampling (:mod:`plausible.metrics.accumulated`: posterior mean and top-1
    shares per chain, in the trace's ``plausibility_summary`` group). ``draws="auto"``: extend the chains until ``until(values)``
    says they converged, ``max_seconds`` pass or ``max_draws`` are drawn (:func:`run_until`;
    the posterior's ``draws_stopped_by`` attribute says which), keeping at most
    ``max_stored`` draws per chain, evenly spread (the posterior's ``thin``). ``resume``:
    start the chains from an earlier run's final states (:class:`Chains`)."""
    computable = tuple(kernel.lazy_variables)
    if lazy and not computable:
        raise ValueError(f"{kernel.name} computes no variable when read")
    skip = computable if lazy else ()
    tune = kernel.default_tune if tune is None else tune
    thin = kernel.default_thin if thin is None else thin
    summarised = NAME in skip and kernel.variables[NAME].dims == (ITEM, CLASS)
    accumulate = ({NAME: Accumulator(chains, *kernel.variables[NAME].shape)} if summarised
                  else {})
    if until is not None:  # the check reads the draws as the trace will name them
        until = functools.partial(_named_check, until, kernel.variables, coords or {})
    values, run = run_draws(kernel, draws=draws, chains=chains, seed=seed, tune=tune, thin=thin,
                            cores=cores, skip=skip, until=until, max_seconds=max_seconds,
                            max_draws=max_draws, max_stored=max_stored, accumulate=accumulate,
                            resume=resume)
    draws = next(values[name] for name in kernel.variables if name in values).shape[1]
    if skip:
        values.update(kernel.compute_when_read(values))
    index = {"chain": np.arange(chains), "draw": np.arange(draws)}

    def dataset(variables: Mapping, sample: tuple[str, ...], group_attrs=None) -> xr.Dataset:
        dims = {dim for v in variables.values() for dim in v.dims}
        return xr.Dataset({name: ((*sample, *v.dims), values[name])
                           for name, v in variables.items()},
                          coords={**{d: index[d] for d in ("chain", "draw") if d in sample},
                                  **{d: c for d, c in (coords or {}).items() if d in dims}},
                          attrs=group_attrs)

    posterior = dataset(kernel.variables, ("chain", "draw"), {
        "sampler": kernel.name, "tune": int(tune), **run,
        **({"computed_when_read": ",".join(skip)} if computable else {}), **(attrs or {})})
    stats = xr.merge([dataset(kernel.stats, ("chain", "draw")),
                      dataset(kernel.chain_stats, ("chain",))])
    trace = assemble(posterior, sample_stats=stats, constant_data=constant_data)
    if summarised:
        trace[GROUP] = xr.DataTree(accumulate[NAME].dataset(coords))
    return trace


__all__ = ["AUTO", "Chains", "assemble", "kernel_blocks", "run_draws", "run_kernel",
           "run_until", "sample_kernel"]
