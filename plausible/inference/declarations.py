"""What a model builder tells :func:`plausible.sample` about its model.

A model builder knows its conjugate structure; :func:`plausible.sample` does not. The builder
records it on the ``pm.Model`` it returns:

* :func:`declare_gibbs`: an exact step method covers some free variables; ``sample``
  instantiates the declared steps and leaves every other free variable to PyMC's automatic
  assignment (NUTS, slice, ...). When every declared step is ``independent`` (each draw an
  exact posterior draw whatever the chain's state) and they cover every free variable,
  ``sample`` draws all chains and draws in batches instead of running PyMC's loop
  (:mod:`plausible.inference.exact`).
* :func:`declare_sampler`: a compiled sampler runs the whole model faster than PyMC's loop
  and writes one storage form of :mod:`plausible.metrics.storage` (candidate form:
  Plackett–Luce; dense: Dawid–Skene); ``sample`` hands the model to it unless the other form
  is asked for. Its kernel (:mod:`plausible.inference.kernel`) is declared as a Gibbs step
  too (:class:`~plausible.inference.bridges.as_pymc_step.KernelStep`), so the same sweep runs inside
  ``pm.sample`` (:func:`plausible.inference.steps` returns the declared steps).
* :func:`declare_log_likelihood`: the model's per-item log-likelihood as a function of a
  trace, and its observations; ``sample`` writes the ``log_likelihood`` and
  ``observed_data`` groups with them (``az.loo`` / ``az.compare`` read them). Many of the
  models' likelihoods are potentials with latent classes summed out or pseudo-likelihoods,
  which PyMC cannot split per item itself.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pymc as pm
import xarray as xr

_GIBBS = "_plausible_gibbs"
_SAMPLER = "_plausible_sampler"
_LIKELIHOOD = "_plausible_log_likelihood"


@dataclass(frozen=True)
class GibbsDeclaration:
    """A Gibbs step class, the random variables it updates, and its keyword arguments."""

    step: type
    vars: tuple
    kwargs: dict[str, Any] = field(default_factory=dict)

    def instantiate(self, model: pm.Model):
        return self.step(list(self.vars), model=model, **self.kwargs)


@dataclass(frozen=True)
class SamplerDeclaration:
    """A compiled sampler ``sampler(draws=, tune=, chains=, seed=, cores=, **kwargs) ->
    DataTree`` of the whole model, with the model-specific keyword arguments ``kwargs``.

    ``form``: the storage form of the plausibilities it writes (``"candidate"`` or
    ``"dense"``); ``nbytes_per_draw``: bytes its trace holds per draw of one chain (for the
    memory guard); ``lazy_nbytes_per_draw``: the same when called with ``lazy=True`` (the
    plausibilities computed from the stored parameters when read), None if it cannot.
    """

    sampler: Callable
    form: str
    nbytes_per_draw: int
    lazy_nbytes_per_draw: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


def declare_gibbs(model: pm.Model, step: type, vars, *, first: bool = False,
                  replace: bool = False, **kwargs) -> None:
    """Record that ``step(vars, **kwargs)`` samples ``vars`` exactly given the rest (after the
    steps declared before it in each iteration, or before all of them with ``first``; the
    only step, dropping those declared before, with ``replace``)."""
    declared = () if replace else getattr(model, _GIBBS, ())
    new = GibbsDeclaration(step, tuple(vars), kwargs)
    setattr(model, _GIBBS, (new, *declared) if first else (*declared, new))


def declared_gibbs(model: pm.Model) -> tuple[GibbsDeclaration, ...]:
    """The Gibbs steps a model builder declared, in the order they run in an iteration."""
    return getattr(model, _GIBBS, ())


def declare_sampler(model: pm.Model, sampler: Callable, *, form: str, nbytes_per_draw: int,
                    lazy_nbytes_per_draw: int | None = None, **kwargs) -> None:
    """Record that ``sampler(draws=..., tune=..., chains=..., seed=..., cores=..., **kwargs)``
    samples the whole model into a DataTree of the storage ``form`` (see
    :class:`SamplerDeclaration`)."""
    if form not in ("candidate", "dense"):
        raise ValueError(f"form must be 'candidate' or 'dense', got {form!r}")
    setattr(model, _SAMPLER, SamplerDeclaration(
        sampler, form, int(nbytes_per_draw),
        None if lazy_nbytes_per_draw is None else int(lazy_nbytes_per_draw), kwargs))


def declared_sampler(model: pm.Model) -> SamplerDeclaration | None:
    """The compiled sampler a model builder declared, if any."""
    return getattr(model, _SAMPLER, None)


@dataclass(frozen=True)
class LikelihoodDeclaration:
    """A model's pointwise log-likelihood, per item (per rating for the ratings models).

    ``pointwise(trace) -> xr.DataArray (chain, draw, dim)``: for every posterior draw, the
    factor item ``i``'s annotations contribute to the log posterior — ``gamma log p(y_i |
    theta)`` at reliability ``gamma``, with any per-item latent class summed out (so that
    PSIS-LOO's importance ratios leave exactly item ``i`` out). At ``gamma = 1`` it is the
    log predictive density of the item's annotations in the order they were made (no
    multinomial coefficient), so models of the same annotations compare with ``az.compare``.
    ``name``: the variable's name in ``log_likelihood`` and ``observed_data``;
    ``observed``: the annotations as a DataArray (None when PyMC records them itself).
    ``dim``: ``"item"``, or ``"rating"`` where the item's own parameters are informed by its
    annotations only, so that leaving the item out defeats PSIS and one annotation is the unit
    (:func:`plausible.models.ratings.log_likelihood`); then ``observed`` has that dimension.
    """

    name: str
    pointwise: Callable
    observed: xr.DataArray | None = None
    dim: str = "item"


def declare_log_likelihood(model: pm.Model, name: str, pointwise: Callable, *,
                           observed: xr.DataArray | None = None, dim: str = "item") -> None:
    """Record the model's pointwise log-likelihood (see :class:`LikelihoodDeclaration`)."""
    if dim != "item" and (observed is None or dim not in observed.dims):
        raise ValueError(f"a log-likelihood per {dim} needs the observed annotations along {dim}")
    setattr(model, _LIKELIHOOD, LikelihoodDeclaration(name, pointwise, observed, dim))


def declared_log_likelihood(model: pm.Model) -> LikelihoodDeclaration | None:
    """The pointwise log-likelihood a model builder declared, if any."""
    return getattr(model, _LIKELIHOOD, None)
