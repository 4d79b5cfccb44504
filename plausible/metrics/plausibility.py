"""Plausibility draws as arrays: the dense view of any trace, point estimates wrapped as one
draw, the posterior mean.

A plausibility is an ``xarray.DataArray`` named ``plausibility`` whose dims include
``"item"`` and ``"class"``; every other dim is a *sample dim* (normally
``("chain", "draw")``). Each sample ``m`` gives, per item, a categorical distribution
``lambda^(m)`` over the ``K`` classes. The metrics read traces directly, in either storage
(:mod:`plausible.metrics.draws`); this module is for code that wants the array itself.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.metrics.accumulated import accumulated, pooled
from plausible.metrics.chunks import chunk_steps
from plausible.metrics.draws import CandidateDraws, DenseDraws, as_draws
from plausible.metrics.storage import CLASS, ITEM, NAME, lazy_dense


def sample_dims(plausibility) -> tuple[str, ...]:
    """The sample dims of plausibility draws in either storage."""
    return as_draws(plausibility).layout.sample_dims


def as_plausibility(obj, var_name: str = NAME) -> xr.DataArray:
    """Dense plausibility draws of a trace, as a DataArray.

    Parameters
    ----------
    obj : xarray.DataArray, xarray.Dataset or xarray.DataTree
        A DataArray of plausibilities; a Dataset holding the variable ``var_name``; or a
        DataTree whose ``posterior`` group holds it. A candidate-form trace gives the lazy
        dense view (:func:`plausible.metrics.storage.lazy_dense`): nothing is densified until
        a block is read, each dask chunk sized like the metrics' blocks.
    var_name : str
        Name of the variable in a Dataset / DataTree (default ``"plausibility"``).

    Returns
    -------
    xarray.DataArray
        The draws, dims ``(sample dims..., "item", "class")`` in any order; not copied.
        Errors as :func:`plausible.metrics.as_draws`.
    """
    draws = as_draws(obj, var_name)
    if isinstance(draws, DenseDraws):
        return draws.source
    if not isinstance(draws, CandidateDraws):
        raise TypeError("top classes hold no plausibilities")
    lay = draws.layout
    sample_step, item_step = chunk_steps(lay, lay.n_classes)
    chunks = (*(1,) * (len(lay.sample_shape) - 1), sample_step, item_step, lay.n_classes)
    return lazy_dense(obj, chunks)


def posterior_mean(plausibility) -> xr.DataArray:
    """Posterior mean plausibility ``(item, class)`` of draws in either storage, float64,
    named ``plausibility``; streamed block by block, or read from the summaries accumulated
    while sampling (:mod:`plausible.metrics.accumulated`) where the draws are not stored."""
    summary = accumulated(plausibility)
    if summary is not None:
        return pooled(summary, "mean").rename(NAME)
    draws = as_draws(plausibility)
    if not isinstance(draws, DenseDraws | CandidateDraws):
        raise TypeError("top classes hold no plausibilities")
    return xr.DataArray(draws.mean(), dims=(ITEM, CLASS),
                        coords={**draws.item_coords(), **draws.class_coords()}, name=NAME)


def point_estimate(probs, items=None, classes=None) -> xr.DataArray:
    """Wrap one ``(item, class)`` estimate as plausibility draws with one sample.

    Point-estimate baselines (IRN, majority vote, PL maximum likelihood) go through the
    same metric functions this way; every certainty is then 1.

    Parameters
    ----------
    probs : array_like or xarray.DataArray, shape (item, class)
        Class scores per item (normally normalised plausibilities). A DataArray must
        have exactly the dims ``item`` and ``class``; its coords are kept.
    items, classes : array_like, optional
        Coordinates for the ``item`` / ``class`` dims (default: the DataArray's coords,
        else ``0..n-1``).

    Returns
    -------
    xarray.DataArray
        Named ``plausibility``, dims ``("chain", "draw", "item", "class")`` with
        ``chain = [0]``, ``draw = [0]``; a view of ``probs`` where possible.
    """
    coords = {}
    if isinstance(probs, xr.DataArray):
        if set(probs.dims) != {ITEM, CLASS}:
            raise ValueError(f"point_estimate needs a DataArray with dims ('item', 'class'), got {probs.dims}")
        probs = probs.transpose(ITEM, CLASS)
        coords = {d: probs[d].values for d in (ITEM, CLASS) if d in probs.coords}
        values = probs.values
    else:
        values = np.asarray(probs)
    if values.ndim != 2:
        raise ValueError(f"point_estimate needs an (item, class) array, got shape {values.shape}")
    if values.dtype.kind == "b":  # e.g. a one-hot majority vote
        values = values.astype(np.float64)
    if values.dtype.kind not in "fiu":
        raise TypeError(f"point_estimate needs real numbers, got dtype {values.dtype}")
    n_items, n_classes = values.shape
    for dim, given, n in ((ITEM, items, n_items), (CLASS, classes, n_classes)):
        if given is not None:
            given = np.asarray(given)
            if given.shape != (n,):
                raise ValueError(f"{dim} coords have shape {given.shape}, expected ({n},)")
            coords[dim] = given
        coords.setdefault(dim, np.arange(n))
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values).all(axis=1)
        if bad.any():
            label = np.asarray(coords[ITEM])[np.argmax(bad)]
            label = label.item() if hasattr(label, "item") else label
            raise ValueError(f"point estimate of item {label!r} is not finite")
    return xr.DataArray(
        values[np.newaxis, np.newaxis],
        dims=("chain", "draw", ITEM, CLASS),
        coords={"chain": [0], "draw": [0], **coords},
        name=NAME,
    )
