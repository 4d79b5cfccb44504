"""The one driver: chains of a kernel (:mod:`plausible.inference.kernel`) into a trace.

What every sampler needs and no kernel re-solves:

* **seeds** — chain ``c`` draws every random number from its own generator, child ``c`` of
  ``numpy.random.SeedSequence(seed).spawn(chains)``, so the draws depend on the seed only,
  never on the number of threads;
* **chains in threads** — the kernels release the GIL (:func:`plausible.inference.chains.run_chains`);
* **warm-up and thinning** — ``tune`` sweeps are discarded, then every ``thin``-th sweep is
  kept (:func:`run_kernel`, the package's one such loop);
* **preallocated draws** — ``(chain, draw, ...)`` arrays of every recorded variable, written
  in place by the kept sweeps;
* **the DataTree** — :func:`assemble`, the package's one assembly of a trace's groups
  (``posterior``, ``sample_stats``, ``log_likelihood``, ``constant_data``,
  ``observed_data``; the models' ``log_likelihood`` is added to a trace by
  :func:`plausible.inference.sampling.add_log_likelihood`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from plausible.inference.chains import available_cores, run_chains
from plausible.inference.kernel import Kernel


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def run_kernel(kernel: Kernel, *, draws: int, chains: int, seed=None, tune: int | None = None,
               thin: int | None = None, cores: int | None = None, skip=()
               ) -> dict[str, np.ndarray]:
    """Run ``chains`` chains of ``kernel``: ``tune`` warm-up sweeps (default the kernel's),
    then ``draws`` kept sweeps, one every ``thin`` (default the kernel's). Returns ``{name:
    (chain, draw, *shape)}`` for every variable and statistic of the kernel except those in
    ``skip``, and ``{name: (chain, *shape)}`` for its per-chain statistics (``chain_stats``,
    written by ``kernel.finish(state, out)`` after the last sweep). ``cores``: threads (default ``min(chains, CPUs)``); the draws do not depend on
    it."""
    draws, chains = _positive("draws", draws), _positive("chains", chains)
    tune = kernel.default_tune if tune is None else int(tune)
    if tune < 0:
        raise ValueError(f"tune must be a whole number >= 0, got {tune!r}")
    thin = _positive("thin", kernel.default_thin if thin is None else thin)
    recorded = {name: v for name, v in {**kernel.variables, **kernel.stats}.items()
                if name not in skip}
    values = {name: np.zeros((chains, draws, *v.shape), dtype=v.dtype)
              for name, v in recorded.items()}
    chain_stats = getattr(kernel, "chain_stats", {})
    summaries = {name: np.zeros((chains, *v.shape), dtype=v.dtype)
                 for name, v in chain_stats.items()}

    def chain(c, chain_seed, *, stop):
        rng = np.random.default_rng(chain_seed)
        state = kernel.start(rng)
        try:
            for t in range(tune + draws * thin):
                if stop.is_set():
                    return
                kept = t - tune
                if kept >= 0 and (kept + 1) % thin == 0:
                    d = kept // thin
                    state = kernel.sweep(rng, state, {name: array[c, d, ...]
                                                      for name, array in values.items()})
                else:
                    state = kernel.sweep(rng, state, None)
            if summaries:
                kernel.finish(state, {name: array[c, ...] for name, array in summaries.items()})
        finally:
            close = getattr(kernel, "close", None)
            if close is not None:
                close(state)

    jobs = list(enumerate(np.random.SeedSequence(seed).spawn(chains)))
    cores = available_cores() if cores is None else _positive("cores", cores)
    run_chains(chain, jobs, min(chains, cores))
    return {**values, **summaries}


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


__all__ = ["assemble", "run_kernel", "sample_kernel"]
