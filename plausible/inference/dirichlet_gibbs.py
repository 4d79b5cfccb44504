"""Exact Gibbs step for a Dirichlet variable with a pseudo-count (multinomial-type) likelihood.

Prior ``lambda_i ~ Dirichlet(alpha)`` and log-likelihood ``gamma * sum_c s_ic log lambda_ic``
give the full conditional ``lambda_i ~ Dirichlet(alpha + gamma * s_i)``, independently
over items ``i``. The step draws it directly, vectorised over all items.

Draws are made on the log scale (:func:`plausible.maths.logspace.log_gamma_draws`, exact
and finite even when ``a`` is tiny, ``alpha = 0.01`` in PrIRN, where ``Gamma(a)`` itself
underflows to 0 often enough to break the log-ratio transform). The Dirichlet draw is
``softmax(log G)``.
"""

import numpy as np
import pytensor
from pymc.logprob.transforms import SimplexTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.maths.logspace import log_gamma_draws


class DirichletGibbs(BlockedStep):
    """Draw a Dirichlet variable from its conjugate full conditional.

    Parameters
    ----------
    vars : list
        One Dirichlet random variable (or its value variable), batch shape ``(item,)``,
        support ``(class,)``, with PyMC's default simplex transform.
    concentration : pytensor expression
        Posterior concentration ``alpha + gamma * s`` broadcastable to the variable's
        shape; evaluated once, when the step is built (it may read ``pm.Data``).
    """

    name = "dirichlet_gibbs"
    stats_dtypes_shapes = {}

    def __init__(self, vars, concentration, model=None, rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError("DirichletGibbs updates exactly one Dirichlet variable")
        [value_var] = value_vars
        rv = model.values_to_rvs[value_var]
        transform = model.rvs_to_transforms.get(rv)
        if not isinstance(transform, SimplexTransform):
            raise ValueError(
                f"DirichletGibbs needs {rv.name!r} on PyMC's simplex transform, got {transform!r}"
            )
        shape = tuple(model.initial_point()[value_var.name].shape[:-1]) + (
            int(rv.shape[-1].eval()),
        )
        concentration = np.broadcast_to(
            pytensor.function([], concentration, mode="FAST_COMPILE")(), shape
        ).copy()
        if not np.all(np.isfinite(concentration) & (concentration > 0)):
            raise ValueError(f"posterior concentration of {rv.name!r} must be finite and > 0")
        self.vars = [value_var]
        self.concentration = concentration
        self.rng = np.random.default_rng(rng)

    def step(self, point):
        log_weights = log_gamma_draws(self.rng, self.concentration)
        # PyMC's simplex transform is the log-ratio  log(x[:-1]) - mean(log x); it is
        # invariant to the normalising constant, so it is computed from log G directly.
        value = log_weights[..., :-1] - log_weights.mean(axis=-1, keepdims=True)
        new_point = dict(point)
        new_point[self.vars[0].name] = value
        return new_point, [{}]
