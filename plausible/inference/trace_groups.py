"""What a PyMC model's trace holds beside the draws, for the kernels that sample it outside
``pm.sample``: its data groups as PyMC writes them, and the dims of its variables.

* :func:`data_groups` — ``observed_data`` and ``constant_data``;
* :func:`model_variables` — :class:`~plausible.inference.kernel.Variable` (dims, shape,
  dtype) of named free variables and deterministics, dims as PyMC names them
  (``<name>_dim_<k>`` where the model gives none);
* :func:`with_deterministics` — a posterior with the model's deterministics computed from its
  free variables, vectorised over chains and draws.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import xarray as xr
from pymc.backends.arviz import (
    coords_and_dims_for_inferencedata,
    dict_to_dataset,
    find_constants,
    find_observations,
)

from plausible.inference.kernel import Variable


def data_groups(model: pm.Model) -> dict[str, xr.Dataset]:
    """``observed_data`` and ``constant_data`` of ``model``, as PyMC writes them (scalars stay
    scalars); a group the model has nothing for is left out."""
    coords, dims = coords_and_dims_for_inferencedata(model)
    groups = {}
    observations = find_observations(model)
    if observations:
        groups["observed_data"] = dict_to_dataset(observations, coords=coords, dims=dims,
                                                  sample_dims=[], inference_library=pm)
    constants = find_constants(model)
    if constants:
        constant = dict_to_dataset(constants, coords=coords, dims=dims, sample_dims=[],
                                   inference_library=pm)
        for name, value in constants.items():
            if np.ndim(value) == 0 and f"{name}_dim_0" in constant.sizes:
                constant = constant.squeeze(f"{name}_dim_0", drop=True)
        groups["constant_data"] = constant
    return groups


def model_variables(model: pm.Model, names) -> dict[str, Variable]:
    """``{name: Variable}`` of the model's free variables or deterministics ``names`` (one
    draw's dims, shape and dtype)."""
    _, dims = coords_and_dims_for_inferencedata(model)
    shapes = model.eval_rv_shapes()
    variables = {}
    for name in names:
        shape = tuple(int(s) for s in (shapes[name] if name in shapes
                                       else model[name].shape.eval()))
        named = tuple(d if d is not None else f"{name}_dim_{k}"
                      for k, d in enumerate(dims.get(name) or (None,) * len(shape)))
        variables[name] = Variable(named, shape, np.dtype(model[name].dtype))
    return variables


def with_deterministics(posterior: xr.Dataset, model: pm.Model) -> xr.Dataset:
    """``posterior`` (the model's free variables, ``chain, draw`` first) with its
    deterministics added."""
    if not model.deterministics:
        return posterior
    return pm.compute_deterministics(posterior, model=model, extend_dataset=True,
                                     progressbar=False)


__all__ = ["data_groups", "model_variables", "with_deterministics"]
