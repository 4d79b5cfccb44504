"""The metrics' single input: plausibility draws.

A plausibility is an ``xarray.DataArray`` named ``plausibility`` whose dims include
``"item"`` and ``"class"``; every other dim is a *sample dim* (normally
``("chain", "draw")``). Each sample ``m`` gives, per item, a categorical distribution
``lambda^(m)`` over the ``K`` classes. Metrics only use the ranking of the classes by
``lambda^(m)``, never the model that produced it.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.metrics.candidates import lazy_dense
from plausible.metrics.storage import CANDIDATES, CLASS, ITEM, NAME, layout

def sample_dims(plausibility) -> tuple[str, ...]:
    """The sample dims of a plausibility: all dims but ``item`` and ``class``."""
    return layout(as_plausibility(plausibility)).sample_dims


def as_plausibility(obj, var_name: str = NAME) -> xr.DataArray:
    """Plausibility draws from a trace.

    Parameters
    ----------
    obj : xarray.DataArray, xarray.Dataset or xarray.DataTree
        A DataArray of plausibilities; a Dataset holding the variable ``var_name``; or a
        DataTree (the trace ``pm.sample`` returns in PyMC 6) whose ``posterior`` group
        holds it. A candidate-storage trace (``posterior/plausibility_candidates``, from
        :func:`plausible.inference.plackett_luce_sampler.sample_candidates`) gives the lazy
        dense view :func:`plausible.metrics.candidates.lazy_dense`.
    var_name : str
        Name of the variable in a Dataset / DataTree (default ``"plausibility"``).

    Returns
    -------
    xarray.DataArray
        The draws, dims ``(sample dims..., "item", "class")`` in any order; not copied.

    Raises
    ------
    TypeError
        For other input types or non-numeric values.
    ValueError
        When the variable, the ``posterior`` group or the ``item`` / ``class`` dims are
        missing.
    """
    if isinstance(obj, xr.DataTree):
        if var_name in obj.data_vars:
            obj = obj[var_name]
        elif "posterior" in obj.children:
            posterior = obj["posterior"]
            if var_name == NAME and CANDIDATES in posterior.data_vars and (
                    var_name not in posterior.data_vars):
                # candidate storage: lazily densified chunk by chunk
                return lazy_dense(obj)
            if var_name not in posterior.data_vars:
                raise ValueError(
                    f"the trace's posterior group has no variable {var_name!r}; "
                    f"it has {sorted(posterior.data_vars)}"
                )
            obj = posterior[var_name]
        else:
            raise ValueError(
                f"the DataTree has no 'posterior' group holding {var_name!r}; "
                f"groups: {sorted(obj.children)}"
            )
    elif isinstance(obj, xr.Dataset):
        if var_name not in obj.data_vars:
            raise ValueError(f"the Dataset has no variable {var_name!r}; it has {sorted(obj.data_vars)}")
        obj = obj[var_name]
    elif not isinstance(obj, xr.DataArray):
        raise TypeError(
            "plausibility must be an xarray DataArray, Dataset or DataTree, "
            f"got {type(obj).__name__}; wrap an (item, class) array with point_estimate()"
        )
    missing = [d for d in (ITEM, CLASS) if d not in obj.dims]
    if missing:
        raise ValueError(f"plausibility needs dims 'item' and 'class'; missing {missing}, dims are {obj.dims}")
    if obj.dtype.kind not in "fiu":
        raise TypeError(f"plausibility must hold real numbers, got dtype {obj.dtype}")
    return obj


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
