"""The one driver: chains of a kernel (:mod:`plausible.inference.kernel`) into a trace.

What every sampler needs and no kernel re-solves:

* **seeds** — chain ``c`` draws every random number from its own generator, child ``c`` of
  ``numpy.random.SeedSequence(seed).spawn(chains)``, so the draws depend on the seed only,
  never on the number of threads;
* **chains in threads** — the kernels release the GIL (:func:`plausible.inference.chains.run_chains`);
* **warm-up and thinning** — ``tune`` sweeps are discarded, then every ``thin``-th sweep is
  kept (:func:`kernel_blocks`, the package's one such loop); independent kernels (exact
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

from collections.abc import Iterator, Mapping

import numpy as np
import xarray as xr

from plausible.inference.chains import available_cores, run_chains
from plausible.inference.kernel import Kernel


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def kernel_blocks(kernel: Kernel, *, draws: int, chains: int, seed=None, tune: int | None = None,
                  thin: int | None = None, cores: int | None = None, skip=(),
                  block_draws: int | None = None) -> Iterator[tuple[slice, dict[str, np.ndarray]]]:
    """Run ``chains`` chains of ``kernel`` and yield their draws a block at a time:
    ``(draws_slice, {name: (chain, block, *shape)})`` for every variable and statistic of the
    kernel except those in ``skip``, ``block_draws`` kept draws per block (all by default).
    Each chain keeps its generator and state from block to block, so the draws do not depend
    on the block size; the last block also holds the per-chain statistics (``chain_stats``,
    ``{name: (chain, *shape)}``, written by ``kernel.finish(state, out)`` after the last
    sweep).

    A chain runs ``tune`` warm-up sweeps (default the kernel's), then keeps every ``thin``-th
    sweep (default the kernel's). An independent kernel (``independent = True``: every draw
    exact, whatever the state) has neither: one sweep writes the whole block of a chain.
    ``cores``: threads (default ``min(chains, CPUs)``, at most the kernel's ``max_threads``
    where it sets one); the draws do not depend on it."""
    draws, chains = _positive("draws", draws), _positive("chains", chains)
    tune = kernel.default_tune if tune is None else int(tune)
    if tune < 0:
        raise ValueError(f"tune must be a whole number >= 0, got {tune!r}")
    thin = _positive("thin", kernel.default_thin if thin is None else thin)
    block_draws = draws if block_draws is None else min(_positive("block_draws", block_draws), draws)
    independent = getattr(kernel, "independent", False)
    recorded = {name: v for name, v in {**kernel.variables, **kernel.stats}.items()
                if name not in skip}
    chain_stats = getattr(kernel, "chain_stats", {})
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(chains)]
    states: list = [None] * chains
    started = [False] * chains
    threads = min(chains, available_cores() if cores is None else _positive("cores", cores),
                  getattr(kernel, "max_threads", chains))

    def chain(c, first, n, values, *, stop):
        rng = rngs[c]
        if not started[c]:
            states[c], started[c] = kernel.start(rng), True
        if independent:
            states[c] = kernel.sweep(rng, states[c], {name: a[c] for name, a in values.items()})
            return
        warm_up = first == 0  # only the first block starts with the warm-up sweeps
        state = states[c]
        for t in range(tune * warm_up + n * thin):
            if stop.is_set():
                return
            kept = t - tune * warm_up
            if kept >= 0 and (kept + 1) % thin == 0:
                d = kept // thin
                state = kernel.sweep(rng, state, {name: a[c, d, ...] for name, a in values.items()})
            else:
                state = kernel.sweep(rng, state, None)
        states[c] = state

    try:
        for first in range(0, draws, block_draws):
            n = min(block_draws, draws - first)
            values = {name: np.zeros((chains, n, *v.shape), dtype=v.dtype)
                      for name, v in recorded.items()}
            run_chains(lambda c, *, stop: chain(c, first, n, values, stop=stop),
                       [(c,) for c in range(chains)], threads)
            if first + n == draws and chain_stats:
                for name, v in chain_stats.items():
                    values[name] = np.zeros((chains, *v.shape), dtype=v.dtype)
                for c in range(chains):
                    kernel.finish(states[c], {name: values[name][c, ...] for name in chain_stats})
            yield slice(first, first + n), values
    finally:
        close = getattr(kernel, "close", None)
        if close is not None:
            for c in range(chains):
                if started[c]:
                    close(states[c])


def run_kernel(kernel: Kernel, *, draws: int, chains: int, seed=None, tune: int | None = None,
               thin: int | None = None, cores: int | None = None, skip=()
               ) -> dict[str, np.ndarray]:
    """All the draws of :func:`kernel_blocks` in one block: ``{name: (chain, draw, *shape)}``
    for every variable and statistic of the kernel except those in ``skip``, and ``{name:
    (chain, *shape)}`` for its per-chain statistics."""
    [(_, values)] = kernel_blocks(kernel, draws=draws, chains=chains, seed=seed, tune=tune,
                                  thin=thin, cores=cores, skip=skip)
    return values


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


def sample_kernel(kernel: Kernel, *, draws: int = 1000, chains: int = 4, seed=None,
                  tune: int | None = None, thin: int | None = None, cores: int | None = None,
                  coords: Mapping | None = None,
                  constant_data: xr.Dataset | Mapping | None = None, lazy: bool = False,
                  attrs: Mapping | None = None) -> xr.DataTree:
    """Sample ``kernel`` (:func:`run_kernel`) into a trace (:func:`assemble`): ``posterior``
    with the kernel's variables (dims as declared, ``coords`` for them), ``sample_stats``
    with its statistics (per-chain ones with dims ``(chain, ...)``), ``constant_data`` from
    ``constant_data``; ``attrs`` added to the posterior's. ``lazy``: the variables
    the kernel can compute from the stored ones (``lazy_variables``) are not stored but
    computed when read, named in the posterior's ``computed_when_read`` attribute (comma-separated;
    empty when all are stored)."""
    computable = tuple(getattr(kernel, "lazy_variables", ()))
    if lazy and not computable:
        raise ValueError(f"{kernel.name} computes no variable when read")
    skip = computable if lazy else ()
    tune = kernel.default_tune if tune is None else tune
    thin = kernel.default_thin if thin is None else thin
    values = run_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune, thin=thin,
                        cores=cores, skip=skip)
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
        "sampler": kernel.name, "tune": int(tune), "thin": int(thin),
        **({"computed_when_read": ",".join(skip)} if computable else {}), **(attrs or {})})
    stats = xr.merge([dataset(kernel.stats, ("chain", "draw")),
                      dataset(getattr(kernel, "chain_stats", {}), ("chain",))])
    return assemble(posterior, sample_stats=stats, constant_data=constant_data)


__all__ = ["assemble", "kernel_blocks", "run_kernel", "sample_kernel"]
